package web

import (
	"html"
	"net/url"
	"strings"
	"testing"
	"time"

	"parcela"
)

// A payment's own page (the API gives every payment its address, which a
// seller forwards) says what became of it. A Pix canceled because its bill
// was paid another way told the payer to generate another, as if the bill
// were still owed; a card approval released (voided: the bill was paid
// meanwhile) was called refused.
func TestPaymentPageSaysWhatBecameOfIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	u, _ := url.Parse(checkout)
	page := b.get(t, checkout)
	if res := b.post(t, u.Path+"/pix", tokens(t, page.body, withCode(url.Values{}, u))); res.status != 303 {
		t.Fatalf("pix: %d", res.status)
	}
	if res := b.postCheckout(t, checkout, "card", card("4111111111111111", "123", 1)); res.status != 303 {
		t.Fatalf("card: %d", res.status)
	}
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	if bill.Status != parcela.BillPaid || len(bill.Payments) != 2 || bill.Payments[0].Status != parcela.PaymentCanceled {
		t.Fatalf("bill %s, payments %+v", bill.Status, bill.Payments)
	}
	pix := html.UnescapeString(b.get(t, "/checkout/payments/"+bill.Payments[0].ID).body)
	if strings.Contains(pix, "gerar outro") || !strings.Contains(pix, "Esta cobrança já foi paga") {
		t.Errorf("the Pix of a bill paid by card:\n%s", pix)
	}
	// The card's approval released, as PayByCard does when the bill was
	// paid while the card was charged.
	b.store.mu.Lock()
	b.store.payments[bill.Payments[1].ID].Status = parcela.PaymentCanceled
	b.store.mu.Unlock()
	voided := html.UnescapeString(b.get(t, "/checkout/payments/"+bill.Payments[1].ID).body)
	if strings.Contains(voided, "recusada") || !strings.Contains(voided, "não será cobrada") {
		t.Errorf("a released card approval:\n%s", voided)
	}
}

// A payment's own page names who is charging, as the checkout and the
// order page do (the header and the footer's "Vendido por", with the
// CNPJ): it showed a Pix code under a bare "Pagamento", the payer left to
// trust a code from nobody they could name.
func TestPaymentPageNamesTheSeller(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testUpfront+":pix")
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	page := html.UnescapeString(b.get(t, "/checkout/payments/"+bill.Payments[0].ID).body)
	for _, want := range []string{`<span class="company-name">Escola Demonstração</span>`, "Vendido por Escola Demonstração · CNPJ\u00a011.222.333/0001-81",
		"<title>Pagamento — Escola Demonstração</title>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the payment page lacks %q", want)
		}
	}
	if strings.Contains(page, "Maria") {
		t.Error("the payment page shows the customer")
	}
}

// A Pix past its expiry, before the sweep marks it expired (its hour for
// the bank's notice), is not to be paid: its page said so under a
// "Aguardando pagamento" badge, as if the payer should still pay it.
func TestPaymentPageOfAPixPastItsExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testUpfront+":pix") // expires 08/03/2026 at 10:00
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	b.clock.Set(time.Date(2026, time.March, 8, 10, 30, 0, 0, parcela.SaoPaulo))
	page := html.UnescapeString(b.get(t, "/checkout/payments/"+bill.Payments[0].ID).body)
	// A first bill's: its order waits for that notice, "Prazo encerrado"
	// as on its checkout ("Expirado" read as a payment made in time lost).
	if strings.Contains(page, "Aguardando pagamento") || !strings.Contains(page, ">Prazo encerrado</span>") {
		t.Errorf("a Pix past its expiry:\n%s", page)
	}
	// Its bill's time is over with it (no other payment is live): no
	// other code can be made, and the order is to be canceled, as its
	// checkout says, where the page told the payer to generate another.
	if strings.Contains(page, "gerar outro") || !strings.Contains(page, "O prazo para pagar esta cobrança acabou") {
		t.Errorf("the Pix of a lapsed first bill:\n%s", page)
	}
}
