package bank_test

import (
	"context"
	"testing"
	"time"

	"parcela"
	"parcela/bank"
	"parcela/brcode"
)

func TestSimulatedIssuesReadableCodes(t *testing.T) {
	b := bank.NewSimulated()
	due := time.Date(2026, 12, 10, 23, 59, 59, 999e6, parcela.SaoPaulo)
	req := parcela.IssueRequest{PaymentID: "01a1fec8-505b-768c-b97e-8682b2fe8580", AmountCents: 55193, DueDate: due, NossoNumero: 42,
		MerchantName: "Escola Demonstração Ltda", MerchantCity: "São Paulo", MerchantKey: "121fcf32-d33f-5ef0-9650-000000000000"}

	req.Method, req.WithPix = parcela.MethodBoleto, true
	got, err := b.Issue(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	bar, err := brcode.ParseLinhaDigitavel(*got.Barcode)
	if err != nil || bar != *got.BarcodeDigits || bar[:3] != "001" || bar[9:19] != "0000055193" || *got.NossoNumero != "00000000042" {
		t.Fatalf("boleto %v %v (%v)", *got.Barcode, *got.BarcodeDigits, err)
	}
	if f, _ := brcode.DueFactor(due); bar[5:9] != f {
		t.Fatalf("due factor %s, want %s", bar[5:9], f)
	}
	pix, err := brcode.ParsePix(*got.PixCode)
	if err != nil || pix.AmountCents != 55193 || len(pix.TxID) > 25 || pix.Key != req.MerchantKey {
		t.Fatalf("bolepix code %+v (%v)", pix, err)
	}

	req.Method, req.WithPix = parcela.MethodPix, false
	got, err = b.Issue(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if pix, err := brcode.ParsePix(*got.Barcode); err != nil || pix.AmountCents != 55193 || got.BarcodeDigits != nil {
		t.Fatalf("pix %+v (%v)", pix, err)
	}
	if _, err := b.Issue(context.Background(), parcela.IssueRequest{Method: parcela.MethodCreditCard}); err == nil {
		t.Fatal("a card payment was issued")
	}
}
