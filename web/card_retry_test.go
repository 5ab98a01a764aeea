package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"parcela"
)

// A card refused sends the payer to the refusal; the Back button restores
// the page the card was typed on, with its tokens, and the payer types
// another card there. That card is another submission and is charged: it
// was answered with the first card's refusal, never sent to the acquirer,
// and the payer read that their second card was refused too. The same card
// sent twice from the page (a double click) is still one attempt.
func TestAnotherCardFromTheSamePageIsCharged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	page := b.get(t, checkout)
	u, _ := url.Parse(checkout)
	refusedCard := tokens(t, page.body, withCode(card("4000000000009995", "123", 1), u))
	refused := b.post(t, u.Path+"/card", refusedCard)
	again := b.post(t, u.Path+"/card", refusedCard)
	if refused.status != http.StatusSeeOther || again.header.Get("Location") != refused.header.Get("Location") {
		t.Fatalf("refused: %d to %q, sent again to %q", refused.status, refused.header.Get("Location"), again.header.Get("Location"))
	}
	if n := len(b.onlyOrder(t).Billings[0].Bills[0].Payments); n != 1 {
		t.Fatalf("%d card attempts from one card sent twice", n)
	}
	other := b.post(t, u.Path+"/card", tokens(t, page.body, withCode(card("4111111111111111", "123", 1), u)))
	if other.status != http.StatusSeeOther || other.header.Get("Location") == refused.header.Get("Location") {
		t.Fatalf("another card: %d to %q, the first card's refusal", other.status, other.header.Get("Location"))
	}
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	if bill.Status != parcela.BillPaid || len(bill.Payments) != 2 {
		t.Fatalf("bill %s with %d payments: the second card was not charged", bill.Status, len(bill.Payments))
	}
	if after := b.get(t, other.header.Get("Location")); strings.Contains(after.body, "Cartão recusado") {
		t.Fatal("the second card's page says it was refused")
	}
}
