package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"parcela"
)

// chargeFailing fails the first charge with err, as a provider that did
// not answer or a conflict would, after the order was created.
type chargeFailing struct {
	*fakeStore
	mu   sync.Mutex
	err  error
	left int
}

func (c *chargeFailing) ChargeOrder(ctx context.Context, a parcela.Auth, id string, req parcela.ChargeRequest) (*parcela.Order, error) {
	c.mu.Lock()
	fail := c.left > 0
	c.left--
	c.mu.Unlock()
	if fail {
		return nil, c.err
	}
	return c.fakeStore.ChargeOrder(ctx, a, id, req)
}

// A purchase form sent again after its order's charge failed (the form
// shown again with the error, or the Back button after an error page)
// charges the order the first post created, where every post made an
// order: the failed ones were left pending, one per try.
func TestFormSentAgainAfterAFailedChargeReusesItsOrder(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		err    error
		status int
		again  func(first, failed string) string // the page whose form is sent again
	}{
		"form shown again": {parcela.Errorf(parcela.ECONFLICT, "billing changed"), http.StatusConflict, func(_, failed string) string { return failed }},
		"back after an error page": {parcela.Errorf(parcela.EUNAVAILABLE, "the bank did not answer"), http.StatusServiceUnavailable,
			func(first, _ string) string { return first }},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var failing *chargeFailing
			b := setup(t, func(d *Deps) {
				failing = &chargeFailing{fakeStore: d.Orders.(*fakeStore), err: tt.err, left: 1}
				d.Orders = failing
			})
			page := b.get(t, b.offerPath())
			res := b.post(t, b.offerPath(), buyForm(t, page.body, testUpfront+":pix", nil))
			if res.status != tt.status {
				t.Fatalf("failed charge: status %d\n%s", res.status, res.body)
			}
			// The payer tries again, choosing boleto this time.
			resent := tt.again(page.body, res.body)
			res = b.post(t, b.offerPath(), buyForm(t, resent, testUpfront+":boleto", nil))
			orders := b.store.orderList()
			if res.status != http.StatusSeeOther || len(orders) != 1 {
				t.Fatalf("sent again: status %d, %d orders\n%s", res.status, len(orders), res.body)
			}
			o := orders[0]
			if o.Status != parcela.OrderInProgress || o.Billings[0].Bills[0].Payments[0].Method != parcela.MethodBoleto ||
				res.header.Get("Location") != (parcela.Links{}).OrderURL(o.ID, o.AccessCode) {
				t.Fatalf("order %s, sent to %s", o.Status, res.header.Get("Location"))
			}
			// The form with another customer's data is another order.
			other := buyForm(t, resent, testUpfront+":pix", nil)
			other.Set("name", "João Souza")
			if res := b.post(t, b.offerPath(), other); res.status != http.StatusSeeOther || len(b.store.orderList()) != 2 {
				t.Fatalf("other data: status %d, %d orders", res.status, len(b.store.orderList()))
			}
		})
	}
}

// The same form posted to two instances at once (a double click that a
// load balancer spread) makes one order, charged once, and both posts are
// sent to it: the instances share no memory, only the store.
func TestRacingPostsOfOneFormOnTwoInstancesMakeOneOrder(t *testing.T) {
	t.Parallel()
	for _, option := range []string{testUpfront + ":pix", testFinanced + ":credit_card"} {
		t.Run(option, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			other := b.instance(t)
			page := b.get(t, b.offerPath())
			form := buyForm(t, page.body, option, nil)
			var wg sync.WaitGroup
			locations := make([]string, 6)
			for i := range locations {
				wg.Go(func() {
					at := b
					if i%2 == 1 {
						at = other
					}
					res := at.post(t, b.offerPath(), form)
					if res.status != http.StatusSeeOther {
						t.Errorf("post %d: status %d\n%s", i, res.status, res.body)
					}
					locations[i] = res.header.Get("Location")
				})
			}
			wg.Wait()
			orders := b.store.orderList()
			if len(orders) != 1 || len(orders[0].Billings) != 1 {
				t.Fatalf("%d orders", len(orders))
			}
			for _, l := range locations {
				if l != locations[0] || l == "" {
					t.Fatalf("sent to %q", locations)
				}
			}
			if strings.HasSuffix(option, "credit_card") != strings.HasPrefix(locations[0], "/checkout/") {
				t.Fatalf("a %s purchase sent to %s", option, locations[0])
			}
		})
	}
}

// A card buyer has the link to their order that a Pix or boleto buyer
// lands on: the card form links to it, keeps it through a refusal, and an
// approval goes to the order's page, where before the card form never
// named the order and an approval stayed on the bill's checkout. A code
// that does not open the order links nothing.
func TestCardBuyerGetsTheirOrdersPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	o := b.onlyOrder(t)
	orderURL := (parcela.Links{}).OrderURL(o.ID, o.AccessCode)
	link := `<a href="` + html.EscapeString(orderURL) + `">Ver meu pedido</a>`
	page := b.get(t, checkout)
	if !strings.Contains(page.body, link) {
		t.Fatalf("the card form lacks the order's link\n%s", page.body)
	}
	bill := o.Billings[0].Bills[0]
	forged := strings.Replace(checkout, "order_code="+url.QueryEscape(o.AccessCode), "order_code=forged", 1)
	if body := b.get(t, forged).body; strings.Contains(body, "Ver meu pedido") || strings.Contains(body, `name="order_code"`) {
		t.Fatal("a code that does not open the order is linked")
	}
	if body := b.get(t, (parcela.Links{}).CheckoutURL(bill.ID, bill.AuthenticationCode)).body; strings.Contains(body, "Ver meu pedido") {
		t.Fatal("the bill's own link names the order")
	}
	card := func(page, number string) url.Values {
		return tokens(t, page, url.Values{"code": {bill.AuthenticationCode}, "order_code": {hiddenValue(page, "order_code")},
			"card_number": {number}, "card_name": {"MARIA DA SILVA"}, "card_month": {"12"}, "card_year": {"2030"}, "card_cvv": {"123"},
			"card_installments": {"1"}, "card_amount": {hiddenValue(page, "card_amount")}})
	}
	action := "/checkout/bills/" + bill.ID + "/card"
	res := b.post(t, action, card(page.body, "4000 0000 0000 0002"))
	if res.status != http.StatusSeeOther || !strings.Contains(res.header.Get("Location"), "order_code=") {
		t.Fatalf("refused: status %d, sent to %s", res.status, res.header.Get("Location"))
	}
	refused := b.get(t, res.header.Get("Location"))
	if !strings.Contains(refused.body, "Cartão recusado") || !strings.Contains(refused.body, link) {
		t.Fatal("the refusal's page lost the order's link")
	}
	res = b.post(t, action, card(refused.body, "4111 1111 1111 1111"))
	if res.status != http.StatusSeeOther || res.header.Get("Location") != orderURL {
		t.Fatalf("approved: status %d, sent to %s, want %s", res.status, res.header.Get("Location"), orderURL)
	}
	if body := b.get(t, orderURL).body; !strings.Contains(body, "Pagamento confirmado!") {
		t.Fatal("the order's page does not confirm the payment")
	}
}

// An offer of one cent offers a card in one installment, as its checkout
// will: it said "or split", which no checkout can do with one cent.
func TestOneCentOfferCardIsOneInstallment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.store.mu.Lock()
	b.offer.AmountCents, b.offer.Product.FullAmountCents = 1, 1
	b.store.mu.Unlock()
	body := html.UnescapeString(b.get(t, b.offerPath()).body)
	if !strings.Contains(body, "Cartão de crédito — R$\u00a00,01") || !strings.Contains(body, "Em 1 vez no cartão, na próxima tela.") ||
		strings.Contains(body, "parcelado sem juros") {
		t.Fatalf("the one-cent card choice:\n%s", body)
	}
}
