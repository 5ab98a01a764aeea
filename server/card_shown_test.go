package server_test

import (
	"context"
	"testing"
	"time"

	"parcela"
)

// A card is charged what its checkout showed the payer, or nothing: the
// page shown at 23:59 of an installment's due day, its form sent at 00:01,
// charged the fine and a day's interest the payer never saw (the button
// said "Pagar R$ … no cartão" with the original amount).
func TestCardChargesWhatTheCheckoutShowed(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		i1 := b.firstInstallment(t, "boleto", "credit_card") // due Monday 1 March 2027
		b.clock.Set(time.Date(2027, 2, 19, 10, 0, 0, 0, parcela.SaoPaulo))
		if _, err := b.app.Checkout.IssuePayment(ctx, parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodBoleto); err != nil {
			t.Fatal(err)
		}
		// The payer opens the checkout in the due day's last minute.
		b.clock.Set(time.Date(2027, 3, 1, 23, 59, 0, 0, parcela.SaoPaulo))
		shown, _, err := b.app.Checkout.BillForPayer(ctx, parcela.Sandbox, i1.ID, i1.AuthenticationCode)
		if err != nil {
			t.Fatal(err)
		}
		owed := shown.Outstanding(b.clock.Now(), b.company)
		if owed != i1.AmountCents {
			t.Fatalf("the checkout shows %d cents on the due day, want the original %d", owed, i1.AmountCents)
		}
		// … and sends the card form two minutes later, the bill now late.
		b.clock.Set(time.Date(2027, 3, 2, 0, 1, 0, 0, parcela.SaoPaulo))
		visa := parcela.CardPayment{Number: "4111 1111 1111 1111", HolderName: "MARIA DA SILVA", ExpiryMonth: 12, ExpiryYear: 2030, CVV: "123",
			Installments: 1, ShownCents: owed}
		p, err := b.app.Checkout.PayByCard(ctx, parcela.Sandbox, i1.ID, i1.AuthenticationCode, visa)
		if err == nil && p.AmountCents != owed {
			t.Fatalf("the card was charged %d cents, the checkout showed %d", p.AmountCents, owed)
		}
		if parcela.ErrorCode(err) != parcela.EINVALIDSTATE {
			t.Fatalf("card sent after the amount changed: %+v, %v; want invalid_state", p, err)
		}
		bill := b.bill(t, i1.ID)
		for _, p := range bill["payments"].([]any) {
			if p.(map[string]any)["payment_method"] == "credit_card" {
				t.Fatalf("a card attempt was recorded: %v", p)
			}
		}
		// Sent again from the page as it is now, it charges what that shows.
		now, _, err := b.app.Checkout.BillForPayer(ctx, parcela.Sandbox, i1.ID, i1.AuthenticationCode)
		if err != nil {
			t.Fatal(err)
		}
		visa.ShownCents = now.Outstanding(b.clock.Now(), b.company)
		if visa.ShownCents <= owed {
			t.Fatalf("the late bill shows %d cents, not more than %d", visa.ShownCents, owed)
		}
		if p, err = b.app.Checkout.PayByCard(ctx, parcela.Sandbox, i1.ID, i1.AuthenticationCode, visa); err != nil ||
			p.Status != parcela.PaymentPaid || p.AmountCents != visa.ShownCents {
			t.Fatalf("card sent from the page as it is: %+v, %v; want paid %d", p, err, visa.ShownCents)
		}
	})
}
