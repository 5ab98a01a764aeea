package web

import (
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/brcode"
)

// A boleto shows the due date it carries: not its expiry (the end of the
// bank's grace, when paying is already late) nor its bill's (a boleto
// re-issued for a late installment is due days after it).
func TestBoletoShowsTheDueDateItCarries(t *testing.T) {
	t.Parallel()
	due := time.Date(2027, time.January, 8, 0, 0, 0, 0, parcela.SaoPaulo) // a Friday
	linha, err := brcode.Boleto{BankCode: "341", CurrencyCode: '9', DueDate: due, AmountCents: 34504, FreeField: strings.Repeat("1", 25)}.LinhaDigitavel()
	if err != nil || len(linha) != 47 {
		t.Fatalf("linha %q, %v", linha, err)
	}
	issued := time.Date(2026, time.December, 29, 9, 0, 0, 0, parcela.SaoPaulo)
	boleto := &parcela.Payment{Method: parcela.MethodBoleto, Barcode: &linha, AmountCents: 34504, CreatedAt: issued,
		ExpiresAt: time.Date(2027, time.January, 11, 23, 59, 59, 999e6, parcela.SaoPaulo)}
	if v := newPayView(nil, boleto, nil, issued); !v.DueDate.Equal(due) || date(v.DueDate) != "08/01/2027" {
		t.Fatalf("due %v (%s), want 8 January 2027", v.DueDate, date(v.DueDate))
	}
	pixCode := "00020126"
	pix := &parcela.Payment{Method: parcela.MethodPix, Barcode: &pixCode, CreatedAt: issued, ExpiresAt: issued.Add(time.Hour)}
	if v := newPayView(nil, pix, nil, issued); !v.DueDate.IsZero() {
		t.Fatalf("a Pix has a due date: %v", v.DueDate)
	}
}

// The last minute to pay a payment expiring the millisecond after a day's
// end is that day's 23:59, also when the next day began at 01:00 with
// daylight saving: a graced boleto expiring after Monday 1 November 2004
// named Tuesday 01:00, when it had expired (a review).
func TestLastPayableBeforeADaylightSavingStart(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ expires, want time.Time }{
		{parcela.BoletoExpiry(parcela.EndOfDay(time.Date(2004, 10, 29, 12, 0, 0, 0, parcela.SaoPaulo)), 1), parcela.EndOfDay(time.Date(2004, 11, 1, 12, 0, 0, 0, parcela.SaoPaulo))},
		{time.Date(2027, 3, 10, 0, 0, 0, 0, parcela.SaoPaulo), parcela.EndOfDay(time.Date(2027, 3, 9, 12, 0, 0, 0, parcela.SaoPaulo))},
		{time.Date(2027, 3, 10, 15, 30, 0, 0, parcela.SaoPaulo), time.Date(2027, 3, 10, 15, 30, 0, 0, parcela.SaoPaulo)},
	} {
		if got := (payView{ExpiresAt: tt.expires}).LastPayable(); !got.Equal(tt.want) {
			t.Errorf("expiring %v: last payable %v, want %v", tt.expires, got, tt.want)
		}
	}
}
