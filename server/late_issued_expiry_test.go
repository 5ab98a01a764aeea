package server_test

import (
	"context"
	"testing"
	"time"

	"parcela"
)

// An installment whose first payment, a Pix asked for on its checkout, was
// issued past its due date is late from the Pix's expiry, the instant it
// stops settling: the API's current amount, the card's price and the
// overdue sweep's selection agree there. At 00:00:00.000 after the Pix's
// last payable day the bill still showed its bare amount and the sweep
// left it out, while nothing could pay it at that amount any more.
func TestLateIssuedPixMakesItsBillLateAsItExpires(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		i1 := b.firstInstallment(t, "boleto", "pix")
		// Three days past its effective due date (the end of 1 March): the
		// Pix is due Sunday 7 March, moved to Monday, expiring at 00:00 Tuesday.
		b.clock.Set(time.Date(2027, 3, 4, 10, 0, 0, 0, parcela.SaoPaulo))
		pix, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix)
		if err != nil {
			t.Fatal(err)
		}
		expiry := time.Date(2027, 3, 9, 0, 0, 0, 0, parcela.SaoPaulo)
		if !pix.ExpiresAt.Equal(expiry) || pix.AmountCents != i1.AmountCents {
			t.Fatalf("Pix: %d cents, expiring %v; want %d, expiring %v", pix.AmountCents, pix.ExpiresAt, i1.AmountCents, expiry)
		}
		for _, at := range []struct {
			now    time.Time
			status string
			owed   int64
		}{
			{expiry.Add(-time.Millisecond), "pending", i1.AmountCents},
			{expiry, "overdue", latePrice(i1.AmountCents, 1)}, // Tuesday is one day past Monday, the Pix's last
		} {
			b.clock.Set(at.now)
			late, err := b.db.LateInstallments(context.Background(), parcela.Due{Now: at.now, Companies: []string{b.company.ID}, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if selected := len(late) == 1; selected != (at.status == "overdue") {
				t.Errorf("at %v: selected as late %v, want the bill %s", at.now, late, at.status)
			}
			b.runSweeps(t, b.sweeps.MarkOverdue)
			got := b.bill(t, i1.ID)
			if got["status"] != at.status || cents(got["current_amount_cents"]) != at.owed {
				t.Errorf("at %v: %v owing %v; want %s owing %d", at.now, got["status"], got["current_amount_cents"], at.status, at.owed)
			}
			if page := b.checkoutTotal(t, i1); page != at.owed {
				t.Errorf("at %v: the checkout (and a card) asks %d, want %d", at.now, page, at.owed)
			}
		}
	})
}
