package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"parcela"
)

// A card refused for its funds on a bill whose only method is a card says
// to try another card, not to pay with Pix or boleto, which its page does
// not offer (an audit); on a bill with them it names them.
func TestCardRefusalNamesOnlyTheWaysThePageOffers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buyCardOnly(t)
	page := b.get(t, checkout)
	u, _ := url.Parse(checkout)
	refused := b.post(t, u.Path+"/card", tokens(t, page.body, withCode(card("4000000000009995", "123", 1), u)))
	after := html.UnescapeString(b.get(t, refused.header.Get("Location")).body)
	if !strings.Contains(after, "Saldo ou limite insuficiente. Tente outro cartão.") || strings.Contains(after, "Pix ou boleto") {
		t.Errorf("a card-only bill's refusal:\n%s", after)
	}
	if got := refusalMessage(new(parcela.RefusedInsufficientFunds), []string{parcela.MethodPix, parcela.MethodBoleto, parcela.MethodCreditCard}); got != "Saldo ou limite insuficiente. Tente outro cartão ou pague com Pix ou boleto." {
		t.Errorf("with Pix and boleto: %q", got)
	}
	if got := refusalMessage(new(parcela.RefusedInsufficientFunds), []string{parcela.MethodBoleto, parcela.MethodCreditCard}); got != "Saldo ou limite insuficiente. Tente outro cartão ou pague com boleto." {
		t.Errorf("with a boleto: %q", got)
	}
}

// A buyer under 18, refused financing, is pointed at paying upfront only
// where the offer sells upfront: on an offer sold only financed "escolha
// pagar à vista" named a choice the page did not have (an audit).
func TestMinorRefusedFinancingOnAnOfferSoldOnlyFinanced(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.store.mu.Lock()
	b.offer.PaymentConfigurations = []*parcela.PaymentConfiguration{b.offer.PaymentConfigurations[1]}
	b.store.mu.Unlock()
	page := b.get(t, b.offerPath())
	res := b.post(t, b.offerPath(), buyForm(t, page.body, testFinanced+":pix", url.Values{"birthdate": {"01/01/2015"}}))
	body := html.UnescapeString(res.body)
	if res.status != http.StatusUnprocessableEntity || strings.Contains(body, "escolha pagar à vista") ||
		!strings.Contains(body, "esta oferta só é vendida parcelada") {
		t.Errorf("status %d; a minor on an offer sold only financed:\n%s", res.status, body)
	}
}

// A waiver ending mid-day is named with its time: its date alone read as
// the whole day to pay without a fine, and that afternoon the page showed
// the fine (an audit).
func TestCheckoutNamesTheTimeAWaiverEndsMidDay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testFinanced+":pix")
	o := b.onlyOrder(t)
	b.pay(t, o.Billings[0].Bills[0].Payments[0].ID)
	waived := o.Billings[0].Bills[2]
	b.clock.Set(waived.DueDate.Add(-5 * 24 * time.Hour))
	if _, err := b.store.IssuePayment(context.Background(), parcela.Sandbox, waived.ID, waived.AuthenticationCode, parcela.MethodBoleto); err != nil {
		t.Fatal(err)
	}
	d := waived.EffectiveDueDate.In(parcela.SaoPaulo).AddDate(0, 0, 3)
	until := time.Date(d.Year(), d.Month(), d.Day(), 15, 0, 0, 0, parcela.SaoPaulo)
	b.store.mu.Lock()
	b.store.bills[waived.ID].DisablePenaltiesUntil = &until
	b.store.mu.Unlock()
	b.clock.Set(until.Add(-5 * time.Hour))
	body := html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(waived.ID, waived.AuthenticationCode)).body)
	if want := "<dt>Pagável sem multa até</dt><dd>" + d.Format("02/01/2006") + " às 14:59 (multa e juros dispensados)</dd>"; !strings.Contains(body, want) {
		t.Errorf("the checkout lacks %q", want)
	}
	b.clock.Set(until.Add(time.Hour))
	if body := b.get(t, parcela.Links{}.CheckoutURL(waived.ID, waived.AuthenticationCode)).body; !strings.Contains(body, "Multa por atraso") {
		t.Error("after the waiver's end the checkout shows no fine")
	}
}
