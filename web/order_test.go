package web

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"parcela"
)

// buy makes the demo purchase for option and returns the page it lands on.
func (b *bundle) buy(t testing.TB, option string) string {
	t.Helper()
	page := b.get(t, b.offerPath())
	res := b.post(t, b.offerPath(), buyForm(t, page.body, option, nil))
	if res.status != http.StatusSeeOther {
		t.Fatalf("buy %s: status %d\n%s", option, res.status, res.body)
	}
	return res.header.Get("Location")
}

// onlyOrder is the one order the test made.
func (b *bundle) onlyOrder(t testing.TB) *parcela.Order {
	t.Helper()
	orders := b.store.orderList()
	if len(orders) != 1 {
		t.Fatalf("%d orders", len(orders))
	}
	return orders[0]
}

func (b *bundle) pay(t testing.TB, paymentID string) {
	t.Helper()
	if _, _, err := b.store.PayPayment(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, paymentID, parcela.Settlement{}); err != nil {
		t.Fatal(err)
	}
}

func TestOrderPageFinancedPix(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orderPath := b.buy(t, testFinanced+":pix")
	o := b.onlyOrder(t)
	first := o.Billings[0].Bills[0]
	p := first.Payments[0]

	res := b.get(t, orderPath)
	body := html.UnescapeString(res.body)
	if res.status != http.StatusOK {
		t.Fatalf("status %d", res.status)
	}
	for _, want := range []string{
		"Aguardando pagamento", "Entrada <span class=\"due-date\">· vence 08/03/2026 às 10:00</span>", `<p class="pay-amount">` + brl(first.AmountCents), `src="/external_api/v1/payments/` + p.ID + `/barcode.png"`,
		*p.Barcode, "Copiar código Pix", "Expira em", "(08/03/2026 às 10:00)", `data-refresh="1"`, `<meta http-equiv="refresh" content="6">`,
		// The countdown's instants to the millisecond, as the API's: an
		// expiry at 23:59:59.999 read to the second ended it early.
		`data-expires-at="` + p.ExpiresAt.In(parcela.SaoPaulo).Format(parcela.TimestampLayout) + `" data-now="2026-03-05T10:00:00.000-03:00"`,
		"Parcela 11 de 11", "Curso de Confeitaria Profissional", "Outras formas de pagar",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
	if n := strings.Count(res.body, `<td class="wide-only"><span class="badge wait">A vencer</span>`); n != 12 {
		t.Errorf("%d pending bills listed, want 12", n)
	}
	checkSecurityHeaders(t, res.header)
	if img := b.get(t, "/external_api/v1/payments/"+p.ID+"/barcode.png"); img.status != 200 || img.header.Get("Content-Type") != "image/png" {
		t.Fatalf("QR image: %d", img.status)
	}

	// The bank confirms: the page says so and stops checking.
	b.pay(t, p.ID)
	paid := b.get(t, orderPath)
	if !strings.Contains(paid.body, "Pagamento da entrada confirmado!") || strings.Contains(paid.body, "data-refresh") ||
		!strings.Contains(paid.body, `<span class="badge ok">Paga</span>`) {
		t.Fatalf("after payment:\n%s", paid.body)
	}
	if strings.Contains(paid.body, *p.Barcode) {
		t.Error("the paid Pix code is still offered")
	}
}

func TestOrderPageUpfrontPaid(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orderPath := b.buy(t, testUpfront+":pix")
	o := b.onlyOrder(t)
	before := b.get(t, orderPath)
	b.pay(t, o.Billings[0].Bills[0].Payments[0].ID)
	after := b.get(t, orderPath)
	if !strings.Contains(after.body, "Pagamento confirmado!") || !strings.Contains(after.body, "Tudo pago") {
		t.Fatalf("after payment:\n%s", after.body)
	}
	if stateOf(before.body) == stateOf(after.body) {
		t.Fatal("the page's state did not change: the script would not reload")
	}
}

func stateOf(page string) string {
	i := strings.Index(page, `data-state="`)
	if i < 0 {
		return ""
	}
	rest := page[i+len(`data-state="`):]
	return rest[:strings.Index(rest, `"`)]
}

func TestOrderPageNeedsItsCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orderPath := b.buy(t, testUpfront+":pix")
	o := b.onlyOrder(t)
	for name, path := range map[string]string{
		"no code":       "/pay/orders/" + o.ID,
		"empty code":    "/pay/orders/" + o.ID + "?code=",
		"wrong code":    "/pay/orders/" + o.ID + "?code=" + url.QueryEscape(o.AccessCode+"x"),
		"another order": strings.Replace(orderPath, o.ID, "c1a5a1b4-1111-4111-8111-111111111111", 1),
	} {
		res := b.get(t, path)
		if res.status != http.StatusNotFound {
			t.Errorf("%s: status %d", name, res.status)
		}
		if strings.Contains(res.body, "Maria") || strings.Contains(res.body, "Confeitaria") {
			t.Errorf("%s: the 404 shows the order", name)
		}
	}
	if res := b.get(t, orderPath); res.status != http.StatusOK {
		t.Fatalf("right code: %d", res.status)
	}
	// The production listener does not open a sandbox order, code or not.
	prod := New(Deps{Checkout: b.store, Orders: b.store, CardCharges: b.store, Payments: b.store, Clock: b.clock, Environment: parcela.Production})
	rec := httptest.NewRecorder()
	prod.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, orderPath, nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("production: %d", rec.Code)
	}
}

func TestOrderPageCanceled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orderPath := b.buy(t, testFinanced+":boleto")
	o := b.onlyOrder(t)
	if _, err := b.store.CancelOrder(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, o.ID, parcela.ReasonExpired); err != nil {
		t.Fatal(err)
	}
	res := b.get(t, orderPath)
	if !strings.Contains(res.body, "Pedido cancelado") || !strings.Contains(res.body, "O prazo para pagar a entrada acabou") ||
		strings.Contains(res.body, "data-refresh") || strings.Contains(res.body, "Outras formas de pagar") {
		t.Fatalf("canceled order:\n%s", res.body)
	}
}

func TestLogsHoldNoPersonalData(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orderPath := b.buy(t, testUpfront+":credit_card")
	checkout := b.get(t, orderPath)
	card := url.Values{"card_number": {"4000 0000 0000 9995"}, "card_name": {"MARIA DA SILVA"}, "card_month": {"12"}, "card_year": {"2030"},
		"card_cvv": {"987"}, "card_installments": {"1"}}
	u, _ := url.Parse(orderPath)
	b.post(t, u.Path+"/card", tokens(t, checkout.body, withCode(card, u)))
	o := b.onlyOrder(t)
	// A timestamp or a duration may hold any digits; what a request carried may not.
	log := logTimes.ReplaceAllString(b.logs.String(), "")
	for _, secret := range []string{"52998224725", "529.982.247-25", "maria@example.com", "98765", "1990-05-17", "Maria", "MARIA",
		o.AccessCode, u.Query().Get("code"), "4000000000009995", "4000 0000", "987", "code="} {
		if strings.Contains(log, secret) {
			t.Errorf("log holds %q", secret)
		}
	}
	if !strings.Contains(log, `"route":"POST /checkout/bills/{bill}/card"`) {
		t.Errorf("log lacks the card post:\n%s", log)
	}
}

func withCode(form url.Values, u *url.URL) url.Values {
	form.Set("code", u.Query().Get("code"))
	return form
}

// logTimes matches the fields every log line holds whatever the request
// was: its time, its random id and its duration.
var logTimes = regexp.MustCompile(`"time":"[^"]*",|"request_id":"[^"]*",|"duration_ms":[0-9.e+-]+,?`)

// The bill due now, without a live payment to show, is shown at what it
// asks for: its amount less what its payments received, as its checkout
// shows it and a card attempt charges it.
func TestOrderPageDueBillAfterAPartialSettlement(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orderPath := b.buy(t, testFinanced+":pix")
	o := b.onlyOrder(t)
	b.pay(t, o.Billings[0].Bills[0].Payments[0].ID)
	second := o.Billings[0].Bills[1]
	b.clock.Set(second.DueDate.AddDate(0, 0, -10))
	b.store.mu.Lock()
	p, err := b.store.issue(b.store.bills[second.ID], parcela.MethodBoleto, second.AmountCents, second.DueDate, true)
	if err != nil {
		t.Fatal(err)
	}
	p.PaidAmountCents, p.Status = 10_000, parcela.PaymentExpired // part of it, then its boleto lapsed
	b.store.mu.Unlock()
	body := html.UnescapeString(b.get(t, orderPath).body)
	if want := `<p class="pay-amount">` + brl(second.AmountCents-10_000) + "</p>"; !strings.Contains(body, want) {
		t.Fatalf("order page lacks %q:\n%s", want, body)
	}
}

// An order with an overdue installment says so on top, in the tone of a
// late bill, and the bill to pay "venceu": it went on saying, in green,
// that the down payment was confirmed and the purchase guaranteed, over a
// bill that "vence" on a day already past.
func TestOrderPageOverdueInstallment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	second, _ := b.firstInstallmentBoleto(t)
	b.clock.Set(second.EffectiveDueDate.Add(12 * 24 * time.Hour))
	b.store.mu.Lock()
	b.store.bills[second.ID].Status = parcela.BillOverdue
	b.store.mu.Unlock()
	o := b.onlyOrder(t)
	body := html.UnescapeString(b.get(t, parcela.Links{}.OrderURL(o.ID, o.AccessCode)).body)
	for _, want := range []string{`<section class="card status-card tone-late"`, "<h1>Pagamento em atraso</h1>",
		"A parcela 1 de 11 venceu em 10/04/2026. Pague o quanto antes: o valor abaixo já inclui a multa e os juros por atraso até hoje.",
		`Parcela 1 de 11 <span class="due-date">· venceu 10/04/2026</span>`, "O boleto ou Pix desta cobrança expirou: escolha como pagar o valor atualizado."} {
		if !strings.Contains(body, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
	if strings.Contains(body, "Pagamento da entrada confirmado!") {
		t.Error("an order with an overdue installment is shown as in good standing")
	}
}

// A financed order's page sums its plan up, as the offer page did before
// the purchase: the payer saw twelve amounts and no total.
func TestOrderPageFinancedTotal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orderPath := b.buy(t, testFinanced+":pix")
	var total int64
	for _, bill := range b.onlyOrder(t).Billings[0].Bills {
		total += bill.AmountCents
	}
	body := b.get(t, orderPath).body
	if want := `<tfoot><tr><th scope="row">Total</th><td class="date-column"></td><td class="num">` + brlCell(total) + `</td>`; !strings.Contains(body, want) {
		t.Errorf("order page lacks %q", want)
	}
	// One payment is its own total.
	b2 := setup(t)
	if body := b2.get(t, b2.buy(t, testUpfront+":pix")).body; strings.Contains(body, "<tfoot>") {
		t.Error("an upfront order's single payment is summed up")
	}
}

// An upfront purchase has no down payment: its single bill is the
// "Pagamento à vista" the page lists, and its lapse or cancelation said
// the time to pay "a entrada" was over.
func TestOrderPageOfALapsedUpfrontPurchaseNamesNoDownPayment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orderPath := b.buy(t, testUpfront+":pix") // due 08/03/2026 at 10:00
	o := b.onlyOrder(t)
	b.clock.Set(time.Date(2026, time.March, 8, 10, 30, 0, 0, parcela.SaoPaulo))
	lapsed := html.UnescapeString(b.get(t, orderPath).body)
	if !strings.Contains(lapsed, "O prazo para pagar esta compra acabou") || strings.Contains(lapsed, "entrada") {
		t.Errorf("the lapsed upfront order's page speaks of a down payment:\n%s", lapsed)
	}
	if _, err := b.store.CancelOrder(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, o.ID, parcela.ReasonExpired); err != nil {
		t.Fatal(err)
	}
	canceled := html.UnescapeString(b.get(t, orderPath).body)
	if !strings.Contains(canceled, "O prazo para pagar esta compra acabou e o pedido foi cancelado") || strings.Contains(canceled, "entrada") {
		t.Errorf("the canceled upfront order's page speaks of a down payment:\n%s", canceled)
	}
}
