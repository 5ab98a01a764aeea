package web

import (
	"net/http"
	"testing"

	"parcela"
)

// A security code typed or pasted with a space around it (a password
// field hides it) is the code: it was refused as "3 números" the payer
// had typed, with no way to see why.
func TestCheckoutCardCodeWithSpacesAround(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	res := b.postCheckout(t, checkout, "card", card("4111 1111 1111 1111", " 123 ", 1))
	if res.status != http.StatusSeeOther {
		t.Fatalf("status %d:\n%s", res.status, res.body)
	}
	if bill := b.onlyOrder(t).Billings[0].Bills[0]; bill.Status != parcela.BillPaid {
		t.Fatalf("bill %s: the card was not charged", bill.Status)
	}
}
