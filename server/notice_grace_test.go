package server_test

import (
	"context"
	"testing"
	"time"

	"parcela"
)

// setNoBoletoGrace makes the bundle's company give boletos no settlement
// grace, as an operator may: its boletos expire as a Pix asked for on the
// same day does.
func (b *bundle) setNoBoletoGrace(t *testing.T) {
	t.Helper()
	if _, err := b.db.SQLDB().Exec(`UPDATE companies SET boleto_grace_business_days = 0 WHERE id = '` + b.company.ID + `'`); err != nil {
		t.Fatal(err)
	}
}

// A down payment's boleto that expires while the bill's Pix is in the hour
// its sweep leaves it for the bank's notice does not lapse the order: the
// notice of that Pix, paid on time, settles the bill. The order was
// canceled and the notice refused (the Pix canceled with it), the payer's
// money on no record.
func TestBoletoExpiryKeepsAPixInItsNoticeGrace(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.setNoBoletoGrace(t)
		orderID, _, _, pix := b.firstBillPixOnSunday(t)
		b.clock.Set(pix.ExpiresAt.Add(30 * time.Second)) // the boleto and the Pix both expired at 2 February 00:00
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.LapseFirstBills)
		if o := b.call("GET", "/external_api/v1/orders/"+orderID, nil).want(t, 200).JSON(t); o["status"] != "in_progress" {
			t.Fatalf("in the Pix's notice grace: order %v (%v), want in_progress", o["status"], o["cancelation_reason"])
		}
		b.call("POST", "/external_api/v1/sandbox/payments/"+pix.ID+"/pay",
			map[string]any{"paid_at": pix.ExpiresAt.Add(-time.Second).Format(time.RFC3339Nano)}).want(t, 200)
		if o := b.call("GET", "/external_api/v1/orders/"+orderID, nil).want(t, 200).JSON(t); o["status"] != "in_progress" {
			t.Fatalf("after the Pix's notice: order %v", o["status"])
		}
	})
}

// An installment boleto that expires while the bill's Pix is in its
// notice grace is not issued again beside it: the bill keeps one live
// payment, and the Pix's notice pays it. A boleto with the late fine was
// issued beside the Pix.
func TestInstallmentBoletoExpiryWithAPixInItsNoticeGrace(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.setNoBoletoGrace(t)
		i1 := b.firstInstallment(t, "pix", "boleto")
		b.clock.Set(i1.DueDate.AddDate(0, 0, -5))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		b.clock.Set(i1.DueDate.Add(-time.Hour))
		pix, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix)
		if err != nil {
			t.Fatal(err)
		}
		b.clock.Set(pix.ExpiresAt.Add(30 * time.Second))
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue)
		unpaid := 0
		for _, p := range b.bill(t, i1.ID)["payments"].([]any) {
			if p.(map[string]any)["status"] == "unpaid" {
				unpaid++
			}
		}
		if unpaid != 1 {
			t.Fatalf("in the Pix's notice grace: %d unpaid payments, want the Pix alone", unpaid)
		}
		paid := b.call("POST", "/external_api/v1/sandbox/payments/"+pix.ID+"/pay",
			map[string]any{"paid_at": pix.ExpiresAt.Add(-time.Second).Format(time.RFC3339Nano)}).want(t, 200).JSON(t)
		if paid["status"] != "paid" {
			t.Fatalf("after the Pix's notice: bill %v", paid["status"])
		}
		// An hour on, the Pix's own expiry finds the bill paid: nothing more.
		b.clock.Set(pix.ExpiresAt.Add(parcela.PixNoticeGrace + time.Minute))
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.IssueDueInstallments)
		if got := b.bill(t, i1.ID); got["status"] != "paid" {
			t.Fatalf("after the grace: bill %v", got["status"])
		}
	})
}

// firstBillPixOnSunday charges a down payment by boleto, due Saturday 30
// January 2027 at 15:30, and asks for a Pix on its checkout on Sunday at
// 10:00: the order, its bills, the first bill and the Pix.
func (b *bundle) firstBillPixOnSunday(t *testing.T) (orderID string, ids []string, first *parcela.Bill, pix *parcela.Payment) {
	t.Helper()
	orderID, ids = b.chargedNearMonthEnd(t, 24, "boleto")
	first, _, err := b.db.Bill(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	b.clock.Set(time.Date(2027, 1, 31, 10, 0, 0, 0, parcela.SaoPaulo))
	if pix, err = b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, first.ID, first.AuthenticationCode, parcela.MethodPix); err != nil {
		t.Fatal(err)
	}
	return orderID, ids, first, pix
}
