package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"parcela"
)

// cardPost is the card form of a checkout page, filled with number.
func cardPost(t testing.TB, page, code, number string) url.Values {
	t.Helper()
	return tokens(t, page, url.Values{"code": {code}, "order_code": {hiddenValue(page, "order_code")}, "card_number": {number},
		"card_name": {"MARIA DA SILVA"}, "card_month": {"12"}, "card_year": {"2030"}, "card_cvv": {"123"}, "card_installments": {"1"},
		"card_amount": {hiddenValue(page, "card_amount")}})
}

// After CardRefusalLimit refused cards in a day, a bill's checkout offers
// no card until the oldest is a day old: it says why and until when, and
// offers Pix and boleto; a card form sent meanwhile is answered 429 with
// the same, and reaches no acquirer. Before, a bill took refused card
// after refused card, 30 a minute from each address.
func TestCheckoutCardsRestAfterTooManyRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	action := "/checkout/bills/" + bill.ID + "/card"
	page := b.get(t, checkout)
	start := b.clock.Now()
	for i := range parcela.CardRefusalLimit {
		res := b.post(t, action, cardPost(t, page.body, bill.AuthenticationCode, "4000 0000 0000 0002"))
		if res.status != http.StatusSeeOther {
			t.Fatalf("refusal %d: status %d\n%s", i, res.status, res.body)
		}
		page = b.get(t, res.header.Get("Location"))
		b.clock.Advance(time.Minute)
	}
	until := dateTime(start.Add(parcela.CardRefusalWindow))
	rest := "Por segurança, esta cobrança não aceita cartão até " + until
	if !strings.Contains(page.body, "Cartão recusado") || !strings.Contains(page.body, rest) || strings.Contains(page.body, `name="card_number"`) ||
		!strings.Contains(page.body, "Pagar com Pix") || !strings.Contains(page.body, "Ver meu pedido") ||
		!strings.Contains(page.body, "<p>O banco emissor recusou o cartão.</p>") {
		t.Fatalf("after %d refusals the checkout shows:\n%s", parcela.CardRefusalLimit, page.body)
	}
	// A card form shown before, sent now, with the total it showed.
	sent := cardPost(t, b.get(t, checkout).body, bill.AuthenticationCode, "4111 1111 1111 1111")
	sent.Set("card_amount", itoa(int(bill.AmountCents)))
	res := b.post(t, action, sent)
	if res.status != http.StatusTooManyRequests || !strings.Contains(res.body, rest) || !strings.Contains(res.body, "O cartão não foi cobrado.") {
		t.Fatalf("a card sent while cards rest: status %d\n%s", res.status, res.body)
	}
	// Its 429 says when cards are taken again, as every other 429 does.
	if got, want := res.header.Get("Retry-After"), itoa(int(start.Add(parcela.CardRefusalWindow).Sub(b.clock.Now()).Seconds())); got != want {
		t.Fatalf("a card sent while cards rest: Retry-After %q, want %q", got, want)
	}
	if got := b.onlyOrder(t).Billings[0].Bills[0]; len(got.Payments) != parcela.CardRefusalLimit || got.Status != parcela.BillPending {
		t.Fatalf("bill %s with %d payments", got.Status, len(got.Payments))
	}
	// A day after the first refusal, cards are taken again.
	b.clock.Set(start.Add(parcela.CardRefusalWindow))
	page = b.get(t, checkout)
	if strings.Contains(page.body, "não aceita cartão") || !strings.Contains(page.body, `name="card_number"`) {
		t.Fatal("the card form did not come back a day later")
	}
	if res := b.post(t, action, cardPost(t, page.body, bill.AuthenticationCode, "4111 1111 1111 1111")); res.status != http.StatusSeeOther {
		t.Fatalf("a card a day later: status %d", res.status)
	}
}
