package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
)

func TestOfferPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.get(t, b.offerPath())
	if res.status != http.StatusOK {
		t.Fatalf("status %d:\n%s", res.status, res.body)
	}
	for _, want := range []string{
		`<html lang="pt-BR">`, "Escola Demonstração", "Curso de Confeitaria Profissional", "Turma regular",
		"Do básico ao avançado, com certificado.", "365 dias", "R$\u00a01.990,00", "R$\u00a02.400,00", "Ambiente de testes",
		"Pix à vista — R$\u00a01.990,00", "Boleto à vista — R$\u00a01.990,00", "Cartão de crédito — R$\u00a01.990,00",
		"Entrada no Pix + parcelas no boleto", "Parcelado no boleto com Pix", "Juros de 1,99% ao mês",
	} {
		if !strings.Contains(html.UnescapeString(res.body), want) {
			t.Errorf("offer page lacks %q", want)
		}
	}
	checkLabels(t, res.body)
	checkSecurityHeaders(t, res.header)
	if res.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", res.header.Get("Cache-Control"))
	}
}

func TestOfferPageProduction(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *Deps) { d.Environment = parcela.Production })
	// The offer is a sandbox one: production does not see it.
	if res := b.get(t, b.offerPath()); res.status != http.StatusNotFound || strings.Contains(res.body, "Ambiente de testes") {
		t.Fatalf("production: status %d, sandbox banner shown: %v", res.status, strings.Contains(res.body, "Ambiente de testes"))
	}
}

// Pages at an https public address tell the browser to keep to https
// (HSTS), error pages and assets too; at an http one they do not (a
// browser ignores it there, and a test listener has no TLS to keep to).
func TestPagesAtAnHTTPSAddressSendHSTS(t *testing.T) {
	t.Parallel()
	secure := setup(t, func(d *Deps) { d.Links.PublicURL = "https://pagamentos.example.com" })
	for _, path := range []string{secure.offerPath(), "/pay/demo/offers/c1a5a1b4-1111-4111-8111-111111111111"} {
		if got := secure.get(t, path).header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
			t.Errorf("%s at https: Strict-Transport-Security %q", path, got)
		}
	}
	plain := setup(t, func(d *Deps) { d.Links.PublicURL = "http://127.0.0.1:8081" })
	if got := plain.get(t, plain.offerPath()).header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("at http: Strict-Transport-Security %q", got)
	}
}

// checkLabels finds every visible form control and its <label for>.
func checkLabels(t *testing.T, page string) {
	t.Helper()
	controls := regexp.MustCompile(`<(input|select|textarea)\b[^>]*>`).FindAllString(page, -1)
	if len(controls) == 0 {
		t.Fatal("no form controls")
	}
	for _, c := range controls {
		if strings.Contains(c, `type="hidden"`) || strings.Contains(c, `type="radio"`) {
			continue // radios are wrapped in their label
		}
		m := regexp.MustCompile(`\bid="([^"]+)"`).FindStringSubmatch(c)
		if m == nil {
			t.Errorf("control without id: %s", c)
			continue
		}
		if !strings.Contains(page, `<label for="`+m[1]+`"`) {
			t.Errorf("control %s has no label", m[1])
		}
	}
	if n, m := strings.Count(page, `type="radio"`), len(regexp.MustCompile(`(?s)<label class="choice">\s*<input type="radio"`).FindAllString(page, -1)); n != m {
		t.Errorf("%d radios, %d inside labels", n, m)
	}
}

func checkSecurityHeaders(t *testing.T, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
		t.Errorf("headers: %v", h)
	}
}

func TestOfferPageEscapesSellerText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.store.mu.Lock()
	b.offer.Product.Name = `<script>alert("x")</script>`
	b.offer.Name = `"><img src=x onerror=alert(1)>`
	b.store.companies["company-1"].Name = "<b>Escola</b>"
	b.store.mu.Unlock()
	res := b.get(t, b.offerPath())
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>Escola</b>"} {
		if strings.Contains(res.body, bad) {
			t.Errorf("page carries seller markup %q", bad)
		}
	}
	if !strings.Contains(res.body, "&lt;script&gt;") {
		t.Error("product name not shown escaped")
	}
}

func TestOfferUnavailable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		edit   func(b *bundle)
		path   string
		status int
		text   string
	}{
		{"unknown offer", nil, "/pay/demo/offers/nope", http.StatusNotFound, "Oferta não encontrada"},
		{"another company's slug", nil, "/pay/outra/offers/" + testOfferID, http.StatusNotFound, "Oferta não encontrada"},
		{"disabled", func(b *bundle) { b.offer.Availability = "disabled" }, "", http.StatusGone, "não está mais disponível"},
		{"product disabled", func(b *bundle) { b.offer.Product.Availability = "disabled" }, "", http.StatusGone, "Este produto não está mais à venda."},
		{"expired", func(b *bundle) {
			at := b.clock.Now().Add(-time.Hour)
			b.offer.ExpiresAt = &at
		}, "", http.StatusGone, "As vendas desta oferta encerraram em 05/03/2026 às 09:00."},
		{"sold out", func(b *bundle) {
			seats := 3
			b.offer.Seats, b.offer.SeatsTaken = &seats, 3
		}, "", http.StatusGone, "As vagas desta oferta esgotaram."},
		{"no enabled configuration", func(b *bundle) {
			for _, pc := range b.offer.PaymentConfigurations {
				pc.Availability = "disabled"
			}
		}, "", http.StatusGone, "sem formas de pagamento"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if tt.edit != nil {
				b.store.mu.Lock()
				tt.edit(b)
				b.store.mu.Unlock()
			}
			path := tt.path
			if path == "" {
				path = b.offerPath()
			}
			res := b.get(t, path)
			if res.status != tt.status || !strings.Contains(res.body, tt.text) {
				t.Fatalf("status %d, want %d with %q:\n%s", res.status, tt.status, tt.text, res.body)
			}
			if strings.Contains(res.body, "<form") {
				t.Error("an unavailable offer shows a form")
			}
			// Posting to it buys nothing either.
			if post := b.post(t, path, customer()); post.status != tt.status {
				t.Errorf("POST status %d, want %d", post.status, tt.status)
			}
			if len(b.store.orderList()) != 0 {
				t.Error("an order was created")
			}
		})
	}
}

// An offer of a product enabled again sells again: its page shows the form
// and its post buys.
func TestOfferOfProductEnabledAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.store.mu.Lock()
	b.offer.Product.Availability = "disabled"
	b.store.mu.Unlock()
	if res := b.get(t, b.offerPath()); res.status != http.StatusGone {
		t.Fatalf("disabled product: status %d", res.status)
	}
	b.store.mu.Lock()
	b.offer.Product.Availability = "enabled"
	b.store.mu.Unlock()
	page := b.get(t, b.offerPath())
	if page.status != http.StatusOK || !strings.Contains(page.body, "<form") {
		t.Fatalf("enabled again: status %d:\n%s", page.status, page.body)
	}
	if res := b.post(t, b.offerPath(), buyForm(t, page.body, testUpfront+":pix", nil)); res.status != http.StatusSeeOther || len(b.store.orderList()) != 1 {
		t.Fatalf("enabled again: POST status %d, %d orders:\n%s", res.status, len(b.store.orderList()), res.body)
	}
}

// previewAmounts reads the amounts of the plan table shown for a financed
// configuration.
func previewAmounts(t *testing.T, page string) []string {
	t.Helper()
	table := regexp.MustCompile(`(?s)<table class="plan-table">.*?</tbody>`).FindString(page)
	if table == "" {
		t.Fatalf("no plan table in:\n%s", page)
	}
	var out []string
	for _, m := range regexp.MustCompile(`<td class="num">([^<]+)</td>`).FindAllStringSubmatch(table, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

func TestPreviewIsWhatTheChargeCreates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.get(t, b.offerPath())
	// Choose 5 payments due on the 20th; without JavaScript the page is
	// updated by posting the form with intent=update.
	choice := url.Values{"installments." + testFinanced: {"5"}, "due_day." + testFinanced: {"20"}}
	form := buyForm(t, first.body, testFinanced+":pix", choice)
	form.Set("intent", "update")
	updated := b.post(t, b.offerPath(), form)
	if updated.status != http.StatusOK {
		t.Fatalf("update: %d", updated.status)
	}
	shown := previewAmounts(t, updated.body)
	if len(shown) != 5 {
		t.Fatalf("preview shows %d bills: %v", len(shown), shown)
	}
	// The JavaScript preview (the plan fragment) agrees.
	fragment := b.get(t, b.offerPath()+"/plan?option="+testFinanced+":pix&installments=5&due_day=20")
	if got := previewAmounts(t, fragment.body); strings.Join(got, "|") != strings.Join(shown, "|") {
		t.Fatalf("fragment %v, page %v", got, shown)
	}

	buy := b.post(t, b.offerPath(), buyForm(t, updated.body, testFinanced+":pix", choice))
	if buy.status != http.StatusSeeOther {
		t.Fatalf("buy: %d\n%s", buy.status, buy.body)
	}
	orders := b.store.orderList()
	if len(orders) != 1 || len(orders[0].Billings) != 1 {
		t.Fatalf("orders: %d", len(orders))
	}
	billing := orders[0].Billings[0]
	var created []string
	var total int64
	for _, bill := range billing.Bills {
		created = append(created, brlCell(bill.AmountCents))
		total += bill.AmountCents
	}
	if strings.Join(created, "|") != strings.Join(shown, "|") {
		t.Fatalf("charge created %v, page showed %v", created, shown)
	}
	if !strings.Contains(updated.body, "Total a pagar</th><td class=\"date-column\"></td><td class=\"num\">"+brlCell(total)) {
		t.Errorf("total %s not shown", brl(total))
	}
	if billing.DueDay != 20 || billing.Installments != 5 || billing.Bills[0].Payments[0].Method != parcela.MethodPix {
		t.Errorf("billing %+v", billing)
	}
	if billing.SignatureUserAgent != "parcela-test" || billing.SignatureRemoteIP != "127.0.0.1" {
		t.Errorf("signature %q %q", billing.SignatureRemoteIP, billing.SignatureUserAgent)
	}
	loc := buy.header.Get("Location")
	o := orders[0]
	if loc != "/pay/orders/"+o.ID+"?code="+url.QueryEscape(o.AccessCode) {
		t.Errorf("redirect to %q", loc)
	}
}

func TestBuyWithAStalePlanShowsTheNewOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	// The installments changed without the plan being shown again.
	res := b.post(t, b.offerPath(), buyForm(t, page.body, testFinanced+":pix", url.Values{"installments." + testFinanced: {"3"}}))
	if res.status != http.StatusOK || !strings.Contains(res.body, "Os valores do plano foram atualizados") {
		t.Fatalf("status %d:\n%s", res.status, res.body)
	}
	if len(previewAmounts(t, res.body)) != 3 || len(b.store.orderList()) != 0 {
		t.Fatal("the new plan is not shown, or an order was made")
	}
	// Confirming it buys.
	if again := b.post(t, b.offerPath(), buyForm(t, res.body, testFinanced+":pix", url.Values{"installments." + testFinanced: {"3"}})); again.status != http.StatusSeeOther {
		t.Fatalf("confirm: %d", again.status)
	}
}

func TestBuyErrorsKeepValues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	form := buyForm(t, page.body, testUpfront+":boleto", url.Values{
		"cpf": {"111.111.111-12"}, "email": {"maria@"}, "name": {""}, "phone": {"123"}, "cep": {"0131"},
		"birthdate": {"2030-01-01"}, "city": {"5300108"}, // Brasília is not in SP
	})
	res := b.post(t, b.offerPath(), form)
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", res.status)
	}
	for _, want := range []string{
		"Informe seu nome completo.", "CPF inválido: confira os 11 números.", "Informe um e-mail como nome@exemplo.com.",
		"Informe o telefone com DDD: 10 ou 11 números.", "Confira o CEP: 8 números de um CEP que existe.", "Informe uma data de nascimento válida, no passado.",
		"Escolha a cidade na lista.", `value="111.111.111-12"`, `value="maria@"`, `value="Avenida Paulista"`, `value="Apto 42"`,
		`value="2030-01-01"`, `<option value="SP" selected>`, `value="` + testUpfront + `:boleto" checked`, `aria-invalid="true"`,
	} {
		if !strings.Contains(res.body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if len(b.store.orderList()) != 0 {
		t.Fatal("an order was created")
	}
}

// A due day out of the list (a form posted by hand) is said beside the due
// day, its configuration shown with the default day, where the financed
// choice vanished (no plan has a due day 0) under a summary that pointed
// at no field. One that is no number is out of the list too: it was
// charged at the default day, where 0 and 32 were refused.
func TestBuyDueDayOutOfTheList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, day := range []string{"0", "-5", "32", "abc", "1e1"} {
		page := b.get(t, b.offerPath())
		res := b.post(t, b.offerPath(), buyForm(t, page.body, testFinanced+":pix", url.Values{"due_day." + testFinanced: {day}}))
		if res.status != http.StatusUnprocessableEntity {
			t.Fatalf("due day %s: status %d", day, res.status)
		}
		for _, want := range []string{"Escolha um dia de vencimento entre 1 e 31.", `value="` + testFinanced + `:pix" checked`} {
			if !strings.Contains(res.body, want) {
				t.Errorf("due day %s: page lacks %q", day, want)
			}
		}
	}
	if len(b.store.orderList()) != 0 {
		t.Fatal("an order was created")
	}
}

// A state missing or not in the list is said beside the state's list, as
// every other field's error is, not as a general failure.
func TestBuyStateErrorBesideTheState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, state := range []string{"", "XX"} {
		page := b.get(t, b.offerPath())
		res := b.post(t, b.offerPath(), buyForm(t, page.body, testUpfront+":boleto", url.Values{"state": {state}, "city": {""}}))
		if res.status != http.StatusUnprocessableEntity {
			t.Fatalf("state %q: status %d", state, res.status)
		}
		want := `<p class="error" id="f-state-error">` + fieldMessages["state"]["required"] + `</p>`
		if !strings.Contains(res.body, want) || !regexp.MustCompile(`id="f-state"[^>]*aria-invalid="true"`).MatchString(res.body) {
			t.Errorf("state %q: no error beside the state", state)
		}
		if strings.Contains(res.body, "Não foi possível concluir") {
			t.Errorf("state %q: told as a general failure", state)
		}
	}
}

// What the customer types is kept whole up to what the domain takes, in
// characters: a name of 206 characters, 406 bytes of UTF-8, is the order's
// name, not its first 300 bytes (which cut it, and split a letter in two).
func TestBuyKeepsLongAccentedText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	name, street := "Maria "+strings.Repeat("é", 200), "R"+strings.Repeat("ç", 160)
	res := b.post(t, b.offerPath(), buyForm(t, page.body, testUpfront+":boleto", url.Values{"name": {name}, "street": {street}}))
	if res.status != http.StatusSeeOther {
		t.Fatalf("status %d\n%s", res.status, res.body)
	}
	o := b.store.orderList()[0]
	if o.CustomerName != name || o.Address.Street != street {
		t.Fatalf("kept %q and %q", o.CustomerName, o.Address.Street)
	}
}

func TestBuyTwoStepAddress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	if !strings.Contains(page.body, `<select id="f-city" name="city" autocomplete="address-level2" required aria-required="true" disabled>`) {
		t.Fatal("the city list is not disabled before a state is chosen")
	}
	// Without JavaScript: choose the state, update, then the city list is there.
	form := tokens(t, page.body, url.Values{"name": {"Maria"}, "state": {"PE"}, "intent": {"update"}})
	res := b.post(t, b.offerPath(), form)
	if res.status != http.StatusOK || !strings.Contains(res.body, `<option value="2611606">Recife</option>`) ||
		strings.Contains(res.body, `value="3550308"`) || !strings.Contains(res.body, `value="Maria"`) {
		t.Fatalf("status %d; Recife listed: %v", res.status, strings.Contains(res.body, "Recife"))
	}
	// The script's list of a state.
	cities := b.get(t, "/pay/cities/PE")
	if cities.status != 200 || !strings.Contains(cities.body, `{"code":"2611606","name":"Recife"}`) || cities.header.Get("Content-Type") != "application/json" {
		t.Fatalf("cities: %d %s", cities.status, cities.body[:min(200, len(cities.body))])
	}
	if b.get(t, "/pay/cities/XX").status != http.StatusNotFound {
		t.Fatal("unknown state listed")
	}
}

func TestBuyUpfrontBoleto(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	res := b.post(t, b.offerPath(), buyForm(t, page.body, testUpfront+":boleto", nil))
	if res.status != http.StatusSeeOther {
		t.Fatalf("status %d\n%s", res.status, res.body)
	}
	order := b.get(t, res.header.Get("Location"))
	p := b.store.orderList()[0].Billings[0].Bills[0].Payments[0]
	for _, want := range []string{"Aguardando pagamento", "Pagamento à vista <span", "R$\u00a01.990,00", formatLinha(*p.Barcode),
		"/external_api/v1/payments/" + p.ID + "/barcode.png", "Copiar linha digitável", "Vencimento: <strong>08/03/2026</strong>"} {
		if !strings.Contains(order.body, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
}

func TestDoubleSubmitMakesOneOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	form := buyForm(t, page.body, testUpfront+":pix", nil)
	var wg sync.WaitGroup
	locations := make([]string, 4)
	for i := range locations {
		wg.Go(func() {
			res := b.post(t, b.offerPath(), form)
			if res.status != http.StatusSeeOther {
				t.Errorf("post %d: status %d", i, res.status)
			}
			locations[i] = res.header.Get("Location")
		})
	}
	wg.Wait()
	if n := len(b.store.orderList()); n != 1 {
		t.Fatalf("%d orders", n)
	}
	for _, l := range locations[1:] {
		if l != locations[0] {
			t.Fatalf("redirects differ: %v", locations)
		}
	}
	// A second purchase from a fresh page is a second order.
	again := b.get(t, b.offerPath())
	if res := b.post(t, b.offerPath(), buyForm(t, again.body, testUpfront+":pix", nil)); res.status != http.StatusSeeOther || len(b.store.orderList()) != 2 {
		t.Fatalf("second purchase: %d, %d orders", res.status, len(b.store.orderList()))
	}
}

func TestBuyNeedsTheFormToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	form := buyForm(t, page.body, testUpfront+":pix", nil)
	for name, f := range map[string]url.Values{
		"forged token": func() url.Values { f := cloneValues(form); f.Set("csrf", "forged"); return f }(),
		"other nonce":  func() url.Values { f := cloneValues(form); f.Set("nonce", "other"); return f }(),
	} {
		res := b.post(t, b.offerPath(), f)
		if res.status != http.StatusForbidden || !strings.Contains(res.body, `value="Maria da Silva"`) {
			t.Errorf("%s: status %d", name, res.status)
		}
	}
	// Without the browser's cookie.
	fresh := setup(t)
	fresh.offer = b.offer
	if res := fresh.post(t, b.offerPath(), form); res.status != http.StatusForbidden {
		t.Errorf("no cookie: status %d", res.status)
	}
	// From another site.
	req, _ := http.NewRequest(http.MethodPost, b.server.URL+b.offerPath(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site: status %d", res.StatusCode)
	}
	if len(b.store.orderList()) != 0 {
		t.Fatal("an order was created")
	}
}

func cloneValues(v url.Values) url.Values {
	c := url.Values{}
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

func TestBuyByCardGoesToTheCardForm(t *testing.T) {
	t.Parallel()
	for _, option := range []string{testUpfront + ":credit_card", testFinanced + ":credit_card"} {
		t.Run(option, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			page := b.get(t, b.offerPath())
			res := b.post(t, b.offerPath(), buyForm(t, page.body, option, nil))
			if res.status != http.StatusSeeOther {
				t.Fatalf("status %d\n%s", res.status, res.body)
			}
			o := b.store.orderList()[0]
			first := o.Billings[0].Bills[0]
			if want := "/checkout/bills/" + first.ID + "?code=" + first.AuthenticationCode + "&order_code=" + url.QueryEscape(o.AccessCode) + "#cartao"; res.header.Get("Location") != want {
				t.Fatalf("redirect %q, want %q", res.header.Get("Location"), want)
			}
			if len(first.Payments) != 0 {
				t.Fatal("a payment was issued for a card bill")
			}
		})
	}
}

func TestBuyRateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *Deps) { d.PostsPerMinute = 3 })
	page := b.get(t, b.offerPath())
	var last response
	for range 3 {
		last = b.post(t, b.offerPath(), tokens(t, page.body, url.Values{"intent": {"update"}}))
	}
	if last.status != http.StatusOK {
		t.Fatalf("third post: %d", last.status)
	}
	last = b.post(t, b.offerPath(), tokens(t, page.body, url.Values{"intent": {"update"}}))
	if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" || !strings.Contains(last.body, "Muitas tentativas") {
		t.Fatalf("fourth post: %d %v", last.status, last.header)
	}
	// The page says the wait Retry-After does (a send comes back every 20 s
	// at 3 a minute), where it said a minute.
	if secs := last.header.Get("Retry-After"); !strings.Contains(last.body, "Aguarde "+secs+" segundo") || strings.Contains(last.body, "minuto") {
		t.Fatalf("fourth post says %q, Retry-After %s", last.body[strings.Index(last.body, "Recebemos"):][:120], secs)
	}
	// The posts' limit does not count the reads.
	if b.get(t, b.offerPath()).status != http.StatusOK {
		t.Fatal("GET limited")
	}
}

func TestClientAddress(t *testing.T) {
	t.Parallel()
	proxy := netipPrefix(t, "127.0.0.0/8")
	for _, tt := range []struct {
		name    string
		trusted bool
		xff     string
		want    string
	}{
		{"no proxy trusted: the peer", false, "203.0.113.9", "127.0.0.1"},
		{"trusted proxy: the forwarded client", true, "203.0.113.9", "203.0.113.9"},
		{"spoofed hop before the real one", true, "198.51.100.1, 203.0.113.9", "203.0.113.9"},
		{"garbage forwarded: the proxy", true, "not-an-ip", "127.0.0.1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := &Handler{}
			if tt.trusted {
				h.d.TrustedProxies = proxy
			}
			r, _ := http.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = "127.0.0.1:5555"
			r.Header.Set("X-Forwarded-For", tt.xff)
			if got := h.clientAddr(r).String(); got != tt.want {
				t.Fatalf("client %s, want %s", got, tt.want)
			}
		})
	}
}

func TestBirthdateAsTyped(t *testing.T) {
	t.Parallel()
	for typed, want := range map[string]string{"17/05/1990": "1990-05-17", "17051990": "1990-05-17", "17.05.1990": "1990-05-17",
		"1990-05-17": "1990-05-17", " 17/05/1990 ": "1990-05-17",
		// A day or a month of one digit, as many type them.
		"5/3/1990": "1990-03-05", "05/3/1990": "1990-03-05", "5.03.1990": "1990-03-05",
		// Month first is no date: the domain refuses it.
		"5/17/1990": "1990-17-05", "5/3/90": "5/3/90"} {
		req := offerForm{Birthdate: typed}.orderRequest("o")
		if got := *req.Order.CustomerBirthdate; got != want {
			t.Errorf("%q sent as %q, want %q", typed, got, want)
		}
	}
}

func TestNoCardDoorNoCardChoice(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *Deps) { d.CardCharges = nil })
	page := b.get(t, b.offerPath())
	if strings.Contains(page.body, ":credit_card") {
		t.Fatal("card choices offered without a card door")
	}
	res := b.post(t, b.offerPath(), buyForm(t, page.body, testUpfront+":credit_card", nil))
	if res.status != http.StatusUnprocessableEntity || len(b.store.orderList()) != 0 {
		t.Fatalf("status %d", res.status)
	}
	// Nor does the checkout of a bill whose configuration takes cards.
	b.buy(t, testUpfront+":pix")
	first := b.onlyOrder(t).Billings[0].Bills[0]
	checkout := b.get(t, parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode))
	if checkout.status != http.StatusOK || strings.Contains(checkout.body, "card_number") || !strings.Contains(checkout.body, "Pagar com Pix") {
		t.Fatalf("checkout without a card door: status %d, card form %v", checkout.status, strings.Contains(checkout.body, "card_number"))
	}
}

func TestBuyRulesOfTheDomain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		option string
		edit   url.Values
		want   string
	}{
		{"a minor may not finance", testFinanced + ":pix", url.Values{"birthdate": {"01/01/2015"}}, "O parcelamento é só para maiores de 18 anos"},
		{"a minor may pay upfront", testUpfront + ":pix", url.Values{"birthdate": {"01/01/2015"}}, ""},
		{"a zipcode of another state", testUpfront + ":pix", url.Values{"cep": {"50010-000"}}, "Este CEP não é do estado escolhido."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			page := b.get(t, b.offerPath())
			res := b.post(t, b.offerPath(), buyForm(t, page.body, tt.option, tt.edit))
			if tt.want == "" {
				if res.status != http.StatusSeeOther {
					t.Fatalf("status %d", res.status)
				}
				return
			}
			if res.status != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(res.body), tt.want) || len(b.store.orderList()) != 0 {
				t.Fatalf("status %d, %q shown: %v", res.status, tt.want, strings.Contains(html.UnescapeString(res.body), tt.want))
			}
		})
	}
}

// A birthdate the domain refuses (one in the future, a typo for 1990)
// has its own error, and is no minor's: the customer was also told that
// financing is only for adults, and to pay upfront.
func TestRefusedBirthdateIsNoMinor(t *testing.T) {
	t.Parallel()
	for _, birth := range []string{"17/05/2090", "31/12/9999", "29/02/2027"} {
		b := setup(t)
		page := b.get(t, b.offerPath())
		res := b.post(t, b.offerPath(), buyForm(t, page.body, testFinanced+":pix", url.Values{"birthdate": {birth}}))
		body := html.UnescapeString(res.body)
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(body, "data de nascimento") {
			t.Fatalf("%s: status %d, birthdate error shown: %v", birth, res.status, strings.Contains(body, "data de nascimento"))
		}
		if strings.Contains(body, "maiores de 18") {
			t.Errorf("%s: a refused birthdate is told financing is for adults only", birth)
		}
	}
}

func TestPlanDisclosesItsCost(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	o := &parcela.Order{Offer: b.offer, CustomerBirthdate: "1990-05-17"}
	plan, err := parcela.PlanCharge(chargeRequest(testFinanced, "pix", 12, 10, signature{"127.0.0.1", "t"}), o, b.company, b.clock.Now(), "")
	if err != nil {
		t.Fatal(err)
	}
	s := plan.Schedule
	if s.CETAnnualRate == nil {
		t.Fatal("the domain gave no CET")
	}
	body := html.UnescapeString(page.body)
	for _, want := range []string{"CET de " + percent(*s.CETAnnualRate) + " ao ano", brl(s.TotalInterestCents) + " no total", "Total a pagar</th><td class=\"date-column\"></td><td class=\"num\">" + brlCell(s.TotalCents)} {
		if !strings.Contains(body, want) {
			t.Errorf("plan lacks %q", want)
		}
	}
}

// disablingOrders disables the offer just before the order is created, as
// a seller's PATCH committed between the form's post and its order would.
type disablingOrders struct {
	parcela.FormOrderService
	store *fakeStore
	edit  func(*parcela.Offer)
}

func (d disablingOrders) CreateFormOrder(ctx context.Context, a parcela.Auth, key string, req parcela.OrderRequest) (*parcela.Order, bool, error) {
	d.store.mu.Lock()
	d.edit(d.store.offers[*req.Order.OfferID])
	d.store.mu.Unlock()
	return d.FormOrderService.CreateFormOrder(ctx, a, key, req)
}

// An offer that stops selling while its form is posted (disabled, expired
// or sold out after the post read it) is shown as unavailable, as the page
// would now be, not the same form again with no word of what went wrong.
func TestBuyWhenTheOfferStopsSellingMeanwhile(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func(*parcela.Offer){
		"disabled": func(o *parcela.Offer) { o.Availability = "disabled" },
		"sold out": func(o *parcela.Offer) { seats := 1; o.Seats, o.SeatsTaken = &seats, 1 },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var store *fakeStore
			b := setup(t, func(d *Deps) {
				store = d.Orders.(*fakeStore)
				d.Orders = disablingOrders{FormOrderService: d.Orders, store: store, edit: edit}
			})
			page := b.get(t, b.offerPath())
			res := b.post(t, b.offerPath(), buyForm(t, page.body, testUpfront+":pix", nil))
			if res.status != http.StatusGone || !strings.Contains(res.body, "Oferta indisponível") || strings.Contains(res.body, "<form") {
				t.Fatalf("status %d, want 410 saying the offer is unavailable:\n%s", res.status, res.body)
			}
			if n := len(b.store.orderList()); n != 0 {
				t.Fatalf("%d orders", n)
			}
		})
	}
}

// A plan of a down payment and one installment says "1 parcela", not
// "1 parcelas".
func TestOfferPlanOfOneInstallmentInTheSingular(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for n, want := range map[string]string{"2": "Seu plano: entrada + 1 parcela</caption>", "3": "Seu plano: entrada + 2 parcelas</caption>"} {
		fragment := b.get(t, b.offerPath()+"/plan?option="+testFinanced+":pix&installments="+n+"&due_day=10")
		if !strings.Contains(fragment.body, want) {
			t.Errorf("plan of %s payments lacks %q:\n%s", n, want, fragment.body)
		}
	}
}

// The seller is named with its CNPJ as printed (or a sole seller's CPF),
// not as a run of 14 digits.
func TestPagesNameTheSellerWithItsDocument(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := html.UnescapeString(b.get(t, b.offerPath()).body)
	if want := "Vendido por Escola Demonstração · CNPJ\u00a011.222.333/0001-81"; !strings.Contains(page, want) {
		t.Errorf("offer page lacks %q", want)
	}
	for doc, want := range map[string]string{"11222333000181": "CNPJ\u00a011.222.333/0001-81", "12ABC34501DE35": "CNPJ\u00a012.ABC.345/01DE-35",
		"52998224725": "CPF\u00a0529.982.247-25", "123": "123"} {
		if got := sellerDocument(doc); got != want {
			t.Errorf("sellerDocument(%s) = %q, want %q", doc, got, want)
		}
	}
}

// An offer whose every way to pay is a card, on a listener no acquirer
// serves, says it takes no payments now (410), as one without an enabled
// configuration does: it showed the form with nothing to choose, and
// refused the filled form for its missing choice.
func TestOfferOfCardsWithoutACardDoor(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *Deps) { d.CardCharges = nil })
	b.store.mu.Lock()
	b.offer.PaymentConfigurations = []*parcela.PaymentConfiguration{{ID: testCardOnly, OfferID: testOfferID, PaymentType: parcela.Upfront,
		PaymentMethods: []string{"credit_card"}, AllowedDownPaymentMethods: []string{}, Availability: "enabled", ExpiresIn: 72, MaxInstallments: 1,
		MinInstallmentCents: 5000}}
	b.store.mu.Unlock()
	page := b.get(t, b.offerPath())
	if page.status != http.StatusGone || !strings.Contains(html.UnescapeString(page.body), "Esta oferta está sem formas de pagamento no momento.") {
		t.Fatalf("status %d\n%s", page.status, page.body)
	}
	if res := b.post(t, b.offerPath(), customer()); res.status != http.StatusGone {
		t.Fatalf("post: %d", res.status)
	}
}

// The errors' summary on top of a refused form lists each error as a link
// to its field, in the form's order, so a keyboard or screen reader user
// goes straight to each: it said only "Confira os campos destacados", and
// the fields were found by tabbing through the whole form.
func TestOfferErrorSummaryLinksToTheFields(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	form := buyForm(t, page.body, testFinanced+":pix", nil)
	form.Set("cpf", "111.111.111-12")
	form.Set("email", "maria@")
	form.Set("number", "")
	form.Set("installments."+testFinanced, "40")
	res := b.post(t, b.offerPath(), form)
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", res.status)
	}
	summary := regexp.MustCompile(`(?s)<div class="error-summary".*?</div>`).FindString(res.body)
	links := regexp.MustCompile(`<a href="#([^"]+)">([^<]+)</a>`).FindAllStringSubmatch(summary, -1)
	var got []string
	for _, l := range links {
		got = append(got, l[1]+": "+html.UnescapeString(l[2]))
		if !strings.Contains(res.body, `id="`+l[1]+`"`) {
			t.Errorf("the summary links to #%s, which the page lacks", l[1])
		}
	}
	want := []string{"installments-" + testFinanced + ": Escolha um número de parcelas da lista.", "f-cpf: CPF inválido: confira os 11 números.",
		"f-email: Informe um e-mail como nome@exemplo.com.", "f-number: Informe o número (ou S/N)."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("summary links:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkErrorsDescribed fails for an error message of the page that no
// control names in its aria-describedby, which a screen reader would not
// read with its field.
func checkErrorsDescribed(t *testing.T, page string) {
	t.Helper()
	errs := regexp.MustCompile(`<p class="error"[^>]*>`).FindAllString(page, -1)
	if len(errs) == 0 {
		t.Fatal("no error messages")
	}
	described := strings.Join(regexp.MustCompile(`aria-describedby="([^"]*)"`).FindAllString(page, -1), " ")
	for _, e := range errs {
		m := regexp.MustCompile(`\bid="([^"]+)"`).FindStringSubmatch(e)
		if m == nil || !regexp.MustCompile(`[" ]`+regexp.QuoteMeta(m[1])+`[" ]`).MatchString(described) {
			t.Errorf("error message described by no control: %s", e)
		}
	}
}

// The plan's controls and the card installments name their errors, as the
// other fields do: their messages were read by no screen reader with the
// field, which was not even marked invalid.
func TestErrorsDescribeTheirControls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	form := buyForm(t, page.body, testFinanced+":pix", nil)
	form.Set("cpf", "111.111.111-12")
	form.Set("installments."+testFinanced, "40")
	form.Set("due_day."+testFinanced, "0")
	res := b.post(t, b.offerPath(), form)
	if !strings.Contains(res.body, "Escolha um número de parcelas da lista.") {
		t.Fatalf("no installments error:\n%s", res.body)
	}
	checkErrorsDescribed(t, res.body)
	// A minor's financing is refused on the choice itself.
	minor := buyForm(t, page.body, testFinanced+":pix", nil)
	minor.Set("birthdate", "2015-01-01")
	if res := b.post(t, b.offerPath(), minor); !strings.Contains(res.body, `id="f-option-error"`) {
		t.Fatalf("no choice error:\n%s", res.body)
	} else {
		checkErrorsDescribed(t, res.body)
	}

	checkout := b.buy(t, testUpfront+":credit_card")
	refused := b.postCheckout(t, checkout, "card", card("4111 1111 1111 1111", "123", 40))
	if !strings.Contains(refused.body, "Escolha o número de parcelas da lista.") {
		t.Fatalf("no card installments error: %d\n%s", refused.status, refused.body)
	}
	checkErrorsDescribed(t, refused.body)
}

// The browser's address autofill puts the second line of an address (the
// complement: "Apto 42") in the complement, and nothing in the number: the
// number asked for address-line2 and the complement for nothing, so an
// autofilled form sent "Apto 42" as the house number and no complement.
func TestOfferAddressAutofill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath()).body
	for name, want := range map[string]string{"street": "address-line1", "complement": "address-line2", "neighborhood": "address-level3", "cep": "postal-code"} {
		if !regexp.MustCompile(`<input id="f-` + name + `" name="` + name + `"[^>]* autocomplete="` + want + `"`).MatchString(page) {
			t.Errorf("%s does not ask autofill for %s", name, want)
		}
	}
	if regexp.MustCompile(`<input id="f-number" [^>]*autocomplete="address-line`).MatchString(page) {
		t.Error("the number asks autofill for a line of the address")
	}
}

// A browser that sends no fetch metadata (Sec-Fetch-Site: Safari before
// 16.4, Firefox before 90) is judged by its Origin. The pages' referrer
// policy lets it send the page's own origin with a form (under
// no-referrer it sent "null", refused with 403, and such a payer could not
// buy): that post buys; one from another site is refused.
func TestFormPostsWithoutFetchMetadataAreJudgedByTheirOrigin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	if p := page.header.Get("Referrer-Policy"); p != "same-origin" {
		t.Fatalf("Referrer-Policy %q: a browser without fetch metadata posts with Origin: null", p)
	}
	post := func(origin string) int {
		f := buyForm(t, page.body, testUpfront+":pix", nil)
		req, err := http.NewRequest(http.MethodPost, b.server.URL+b.offerPath(), strings.NewReader(f.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		res, err := b.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := post("https://loja.example"); got != http.StatusForbidden || len(b.store.orderList()) != 0 {
		t.Fatalf("a post from another site: status %d, %d orders", got, len(b.store.orderList()))
	}
	if got := post(b.server.URL); got != http.StatusSeeOther || len(b.store.orderList()) != 1 {
		t.Fatalf("a post from the page's own origin: status %d, %d orders", got, len(b.store.orderList()))
	}
}
