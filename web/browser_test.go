package web

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"parcela"
	"parcela/web/browsertest"
)

// The browser tests drive a real headless Chromium (browsertest) over the
// pages and the fake use cases, each test in its own browser context.

func TestMain(m *testing.M) {
	code := m.Run()
	browsertest.Stop()
	os.Exit(code)
}

// planRows reads the amounts of a financed configuration's plan table.
func planRows(tb *browsertest.Tab, config string) string {
	return tb.Eval(`Array.from(document.querySelectorAll(".option-group[data-group='` + config + `'] .plan-table tbody td.num")).map(td => td.textContent.trim()).join("|")`)
}

func TestBrowserBuyFinancedPixWithTheKeyboard(t *testing.T) {
	b := setup(t)
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(b.offerPath())
	tb.WaitFor(`document.documentElement.classList.contains("js")`)
	tb.Shots("offer")
	tb.ViewportShot("offer-viewport-desktop")

	// The whole purchase with the keyboard alone.
	tb.TabTo(`input[name=option]`)
	tb.ArrowTo(testFinanced + ":pix")
	tb.TabTo(`select[name="installments.` + testFinanced + `"]`)
	tb.ArrowTo("4")
	tb.TabTo(`select[name="due_day.` + testFinanced + `"]`)
	tb.ArrowTo("20")
	tb.WaitFor(`document.querySelectorAll(".option-group[data-group='` + testFinanced + `'] .plan-table tbody tr").length === 4 && !document.querySelector(".plan.loading")`)
	tb.WaitFor(`document.querySelector(".option-group[data-group='` + testFinanced + `'] .plan-table").textContent.includes("/05/2026")`)
	preview := planRows(tb, testFinanced)

	maria := maps.Clone(browsertest.MariaTyped)
	maria["complement"] = "Apto 42"
	tb.TypeCustomer(maria)
	tb.TabTo("button.primary")
	tb.Do(chromedp.KeyEvent(kb.Enter))

	tb.WaitFor(`location.pathname.startsWith("/pay/orders/") && document.readyState === "complete"`)
	o := b.onlyOrder(t)
	var created []string
	for _, bill := range o.Billings[0].Bills {
		created = append(created, brlCell(bill.AmountCents))
	}
	if strings.Join(created, "|") != preview {
		t.Fatalf("the charge created %v, the page showed %s", created, preview)
	}
	p := o.Billings[0].Bills[0].Payments[0]
	tb.WaitFor(`document.querySelector("img.qr").complete && document.querySelector("img.qr").naturalWidth > 0`)
	if got := tb.Eval(`document.querySelector("textarea.code").value`); got != *p.Barcode {
		t.Fatalf("copy-and-paste code %q, want %q", got, *p.Barcode)
	}
	if !tb.Is(`document.body.innerText.includes("Aguardando pagamento")`) {
		t.Fatal("no waiting message")
	}
	tb.Shots("order-waiting")

	// The bank confirms; the page notices by itself.
	b.pay(t, p.ID)
	tb.WaitFor(`document.body.innerText.includes("Pagamento da entrada confirmado!")`)
	tb.Shots("order-paid")
}

func TestBrowserBuyUpfrontBoleto(t *testing.T) {
	b := setup(t)
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(b.offerPath())
	tb.Do(chromedp.Click(chromedp.CSS(`input[value="` + testUpfront + `:boleto"]`)))
	tb.FillCustomer(browsertest.Maria)
	tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
	tb.WaitFor(`location.pathname.startsWith("/pay/orders/") && document.readyState === "complete"`)
	p := b.onlyOrder(t).Billings[0].Bills[0].Payments[0]
	tb.WaitFor(`document.querySelector("img.barcode").complete && document.querySelector("img.barcode").naturalWidth > 0`)
	if got := tb.Eval(`document.querySelector("[id^=linha-]").value`); got != formatLinha(*p.Barcode) {
		t.Fatalf("linha digitável %q", got)
	}
	tb.Shots("order-boleto")
	b.pay(t, p.ID)
	tb.WaitFor(`document.body.innerText.includes("Pagamento confirmado!")`)
}

func TestBrowserFormErrorsKeepValues(t *testing.T) {
	b := setup(t)
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(b.offerPath())
	bad := map[string]string{"name": "Maria da Silva", "cpf": "111.111.111-12", "email": "maria@", "phone": "11987654321",
		"street": "Avenida Paulista", "state": "SP", "city": ""}
	tb.FillCustomer(bad)
	tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
	tb.WaitFor(`document.querySelector(".error-summary") !== null`)
	for id, want := range map[string]string{"f-name": "Maria da Silva", "f-cpf": "111.111.111-12", "f-email": "maria@", "f-street": "Avenida Paulista", "f-state": "SP"} {
		if got := tb.Eval(`document.getElementById("` + id + `").value`); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	for id, msg := range map[string]string{"f-cpf-error": "CPF inválido", "f-email-error": "nome@exemplo.com", "f-city-error": "Escolha a cidade", "f-cep-error": "Informe o CEP"} {
		if got := tb.Eval(`(e => e ? e.textContent : "")(document.getElementById("` + id + `"))`); !strings.Contains(got, msg) {
			t.Errorf("%s = %q, want %q", id, got, msg)
		}
	}
	if len(b.store.orderList()) != 0 {
		t.Fatal("an order was created")
	}
	tb.Shots("offer-errors")
}

func TestBrowserCheckoutCard(t *testing.T) {
	b := setup(t)
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(b.offerPath())
	tb.Do(chromedp.Click(chromedp.CSS(`input[value="` + testUpfront + `:credit_card"]`)))
	tb.FillCustomer(browsertest.Maria)
	tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
	tb.WaitFor(`location.pathname.startsWith("/checkout/bills/") && location.hash === "#cartao" && document.readyState === "complete"`)
	o := b.onlyOrder(t)
	orderURL := (parcela.Links{}).OrderURL(o.ID, o.AccessCode)
	if got := tb.Eval(`(a => a ? a.getAttribute("href") : "")(document.querySelector(".order-link a"))`); got != orderURL {
		t.Fatalf("the card form links to the order at %q, want %q", got, orderURL)
	}
	tb.Shots("checkout")

	tb.PayByCard("4000 0000 0000 0002", "123", "3")
	tb.WaitFor(`document.body.innerText.includes("Cartão recusado") && document.body.innerText.includes("O banco emissor recusou o cartão")`)
	if !tb.Is(`document.querySelector("#f-card_number") && document.querySelector("#f-card_number").value === ""`) {
		t.Fatal("no card form to try again, or the number is kept")
	}
	tb.Shots("checkout-refused")
	if !tb.Is(`document.querySelector(".order-link a") !== null`) {
		t.Fatal("the refused card's page lost the order's link")
	}
	tb.PayByCard("4111 1111 1111 1111", "123", "3")
	// Approved, the buyer lands on the order's page, as a Pix or boleto
	// buyer does.
	tb.WaitFor(`location.pathname.startsWith("/pay/orders/") && document.body.innerText.includes("Pagamento confirmado!")`)
	if got := tb.Eval(`location.pathname + location.search`); got != orderURL {
		t.Fatalf("approved, sent to %s, want %s", got, orderURL)
	}
	if tb.Is(`document.querySelector("form")`) {
		t.Fatal("a paid order still offers a form")
	}
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	if len(bill.Payments) != 2 || bill.Status != "paid" {
		t.Fatalf("bill %s with %d payments", bill.Status, len(bill.Payments))
	}
	tb.Shots("order-paid-by-card")
}

func TestBrowserPixOnDemand(t *testing.T) {
	b := setup(t)
	checkout := b.buy(t, testFinanced+":credit_card")
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(checkout)
	tb.Do(chromedp.Click(chromedp.CSS(`form.way[action$="/pix"] button`)))
	tb.WaitFor(`document.querySelector("img.qr") && document.querySelector("img.qr").complete && document.querySelector("img.qr").naturalWidth > 0`)
	p := b.onlyOrder(t).Billings[0].Bills[0].Payments[0]
	if got := tb.Eval(`document.querySelector("textarea.code").value`); got != *p.Barcode {
		t.Fatalf("Pix code %q", got)
	}
	tb.Shots("checkout-pix")
}

// Back from a Pix issued on the checkout, the browser shows the page as
// it was, with its form tokens: the card typed there is charged.
func TestBrowserCardAfterBackFromPix(t *testing.T) {
	b := setup(t)
	checkout := b.buy(t, testFinanced+":credit_card")
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(checkout)
	tb.Do(chromedp.Click(chromedp.CSS(`form.way[action$="/pix"] button`)))
	tb.WaitFor(`location.search.includes("payment=") && document.querySelector("img.qr") !== null && document.readyState === "complete"`)
	tb.Eval(`history.back(), ""`)
	tb.WaitFor(`!location.search.includes("payment=") && document.readyState === "complete"`)
	payRestoredPageByCard(tb)
	tb.WaitFor(`document.body.innerText.includes("Pagamento da entrada confirmado!")`)
	if bill := b.onlyOrder(t).Billings[0].Bills[0]; bill.Status != "paid" {
		t.Fatalf("bill %s with %d payments: the card was not charged", bill.Status, len(bill.Payments))
	}
	tb.Shots("checkout-card-after-back")
}

// Back from a card refused on the checkout, the browser shows the page as
// it was, with its form tokens: another card typed there is charged, not
// answered with the first card's refusal.
func TestBrowserAnotherCardAfterBackFromARefusal(t *testing.T) {
	b := setup(t)
	checkout := b.buy(t, testFinanced+":credit_card")
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(checkout)
	tb.PayByCard("4000 0000 0000 0002", "123", "1")
	tb.WaitFor(`document.body.innerText.includes("Cartão recusado") && document.readyState === "complete"`)
	tb.Eval(`history.back(), ""`)
	tb.WaitFor(`!document.body.innerText.includes("Cartão recusado") && document.querySelector("#f-card_number") !== null && document.readyState === "complete"`)
	payRestoredPageByCard(tb)
	tb.WaitFor(`document.body.innerText.includes("Pagamento da entrada confirmado!")`)
	if bill := b.onlyOrder(t).Billings[0].Bills[0]; bill.Status != "paid" {
		t.Fatalf("bill %s with %d payments: the second card was not charged", bill.Status, len(bill.Payments))
	}
	tb.Shots("checkout-another-card-after-a-refusal")
}

// payRestoredPageByCard types a card that is approved into the checkout's
// card form and sends it. Typed by script: chromedp's queries wait on a
// document it saw loading, and a page restored from the back-forward
// cache never loads.
func payRestoredPageByCard(tb *browsertest.Tab) {
	tb.Eval(`(() => {
		const set = (id, v) => document.getElementById(id).value = v;
		set("f-card_number", "4111 1111 1111 1111"); set("f-card_name", "MARIA DA SILVA"); set("f-card_month", "12");
		set("f-card_year", String(new Date().getFullYear() + 3)); set("f-card_cvv", "123");
		document.querySelector(".card-form button.primary").click();
		return "";
	})()`)
}

func TestBrowserWrongCode(t *testing.T) {
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	u, _ := url.Parse(checkout)
	tb := browsertest.Open(t, b.server.URL)
	ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
	defer cancel()
	res, err := chromedp.Run(ctx, chromedp.NavigateResponse(b.server.URL+u.Path+"?code=wrong"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 404 || !tb.Is(`document.body.innerText.includes("Página não encontrada")`) || tb.Is(`document.body.innerText.includes("Confeitaria")`) {
		t.Fatalf("status %d", res.Status)
	}
}

func TestBrowserWithoutJavaScript(t *testing.T) {
	b := setup(t)
	tb := browsertest.Open(t, b.server.URL)
	if _, err := chromedp.Call(tb.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	tb.Open(b.offerPath())
	// The update buttons show; the city list waits for a state.
	if !tb.Is(`getComputedStyle(document.querySelector(".nojs-only")).display !== "none" && document.querySelector("#f-city").disabled`) {
		t.Fatal("the page is not in its no-JavaScript form")
	}
	tb.Do(chromedp.Click(chromedp.CSS(`input[value="`+testFinanced+`:boleto"]`)),
		chromedp.SetValue(chromedp.CSS(`select[name="installments.`+testFinanced+`"]`), "6"),
		chromedp.SendKeys(chromedp.ID("f-name"), "Maria da Silva"), chromedp.SetValue(chromedp.ID("f-state"), "SP"))
	tb.Do(chromedp.Click(chromedp.CSS(`#f-state ~ button[value=update]`)))
	tb.WaitFor(`document.readyState === "complete" && !document.querySelector("#f-city").disabled`)
	if planRows(tb, testFinanced) == "" || tb.Is(`document.querySelectorAll(".option-group[data-group='`+testFinanced+`'] .plan-table tbody tr").length !== 6`) {
		t.Fatal("the plan of the chosen installments is not shown after the update")
	}
	rest := map[string]string{}
	for k, v := range browsertest.Maria {
		if k != "name" && k != "state" {
			rest[k] = v
		}
	}
	tb.FillCustomer(rest)
	tb.Do(chromedp.SetValue(chromedp.ID("f-city"), "3550308"), chromedp.Click(chromedp.CSS("button.primary")))
	tb.WaitFor(`location.pathname.startsWith("/pay/orders/") && document.readyState === "complete"`)
	if !tb.Is(`document.querySelector('noscript') !== null && document.body.innerText.includes("Boleto")`) {
		t.Fatal("the order page lacks its no-JavaScript refresh or the boleto")
	}
	tb.Shots("order-nojs")
	// Its checkout shows the same boleto, and, reloading never by itself
	// (a card being typed would be wiped), a link to look for its payment.
	tb.Do(chromedp.Click(chromedp.CSS(`a[href^="/checkout/bills/"]`)))
	tb.WaitFor(`location.pathname.startsWith("/checkout/bills/") && document.readyState === "complete"`)
	if !tb.Is(`document.querySelector('meta[http-equiv="refresh"]') === null && getComputedStyle(document.querySelector("#pagamento .refresh-note")).display !== "none"`) {
		t.Fatal("the checkout without JavaScript reloads by itself, or shows no link to look for the payment")
	}
	tb.Shots("checkout-nojs")
}

// A state's cities or a plan that cannot be fetched (the network, a
// proxy's error page) leaves the form as it is without JavaScript: the city
// waits for the form to be sent, which brings the state's cities, and the
// plan says it could not follow the options. The city field stayed on
// "Carregando cidades…" for good, and the plan of the options before stayed
// on screen as if it were the chosen one's.
func TestBrowserFetchesThatFail(t *testing.T) {
	b := setup(t)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/pay/cities/") || strings.HasSuffix(r.URL.Path, "/plan") {
			http.Error(w, "<html>502 Bad Gateway</html>", http.StatusBadGateway)
			return
		}
		b.server.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(failing.Close)
	tb := browsertest.Open(t, failing.URL)
	tb.Open(b.offerPath())
	tb.WaitFor(`document.documentElement.classList.contains("js")`)
	tb.Do(chromedp.SetValue(chromedp.ID("f-state"), "SP"))
	tb.Eval(`document.getElementById("f-state").dispatchEvent(new Event("change")), ""`)
	tb.WaitFor(`document.querySelector("#f-city option").textContent === "Escolha após enviar" && document.querySelector("#f-city").disabled`)
	tb.Do(chromedp.Click(chromedp.CSS(`input[value="` + testFinanced + `:pix"]`)))
	tb.Do(chromedp.SetValue(chromedp.CSS(`select[name="installments.`+testFinanced+`"]`), "6"))
	tb.Eval(`document.querySelector("select[name='installments.` + testFinanced + `']").dispatchEvent(new Event("change")), ""`)
	tb.WaitFor(`document.querySelector(".option-group[data-group='` + testFinanced + `'] .plan .plan-stale") !== null && !document.querySelector(".plan.loading")`)
	if rows := planRows(tb, testFinanced); rows != "" {
		t.Fatalf("a plan stays shown after its options changed: %s", rows)
	}
	tb.Shots("offer-fetches-failed")
	// Sent without a city, the form comes back with the state's cities.
	rest := map[string]string{}
	for k, v := range browsertest.Maria {
		if k != "state" && k != "city" {
			rest[k] = v
		}
	}
	tb.FillCustomer(rest)
	tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
	tb.WaitFor(`document.readyState === "complete" && !document.querySelector("#f-city").disabled && document.querySelectorAll("#f-city option").length > 100`)
	if len(b.store.orderList()) != 0 {
		t.Fatal("an order was created without a city")
	}
}

// On a 360-pixel phone the codes a payer copies or types show whole, and
// the tables stay inside their cards: the linha digitável was cut off in a
// one-line input (no way to read it to type it without the script's copy
// button), the Pix code was scrolled inside four rows, and the order's
// bills table ran past its card.
func TestBrowserPhoneShowsWholeCodesAndTables(t *testing.T) {
	for _, option := range []string{testUpfront + ":boleto", testFinanced + ":pix"} {
		b := setup(t)
		order := b.buy(t, option)
		tb := browsertest.Open(t, b.server.URL)
		tb.Do(chromedp.EmulateViewport(360, 740))
		bill := b.onlyOrder(t).Billings[0].Bills[0]
		for i, path := range []string{order, parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode)} {
			tb.Open(path)
			tb.Shots("phone-" + []string{"order", "checkout"}[i] + "-" + strings.ReplaceAll(option, ":", "-"))
			tb.Do(chromedp.EmulateViewport(360, 740))
			tb.WaitFor(`document.querySelector(".code") !== null`)
			// Sized to their content, and by their rows in a browser that
			// does not size a box so.
			for _, sizing := range []string{"content", "fixed"} {
				clipped := tb.Eval(`Array.from(document.querySelectorAll(".code")).filter(c => (c.style.fieldSizing = "` + sizing + `", c.scrollWidth > c.clientWidth + 1 || c.scrollHeight > c.clientHeight + 1)).map(c => c.id).join(" ")`)
				if clipped != "" {
					t.Errorf("%s: codes cut off at 360 px (field-sizing %s): %s", option, sizing, clipped)
				}
			}
			over := tb.Eval(`Array.from(document.querySelectorAll("table")).filter(t => t.getBoundingClientRect().right > t.closest(".card").getBoundingClientRect().right - 1).map(t => t.className).join(" ")`)
			if over != "" {
				t.Errorf("%s: tables past their card at 360 px: %s", option, over)
			}
			if w := tb.Eval(`String(document.documentElement.scrollWidth)`); w != "360" {
				t.Errorf("%s: the page is %s px wide on a 360 px screen", option, w)
			}
		}
	}
}

// contrastJS is the WCAG contrast ratio of two computed CSS colors (rgb()
// or rgba() with full alpha), as a JavaScript function.
const contrastJS = `((a, b) => {
	const lum = c => { const [r, g, b] = c.match(/[\d.]+/g).slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
	const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
	return (x + 0.05) / (y + 0.05);
})`

// Every palette, light or dark, keeps its accent text (the offer's name,
// links, the secondary buttons) and the text on its accent (the steps,
// the primary button) readable at 4.5:1: on a dark page, the palettes but
// the default kept their light-page accents, a dark blue or gray on the
// dark surface (gray at 1.7:1).
func TestBrowserPalettesContrast(t *testing.T) {
	b := setup(t)
	tb := browsertest.Open(t, b.server.URL)
	for _, dark := range []bool{false, true} {
		for palette := range knownPalettes {
			b.store.mu.Lock()
			c := b.store.companies["company-1"]
			c.Dark, c.Palette = dark, palette
			b.store.mu.Unlock()
			tb.Open(b.offerPath())
			if dark && palette == "blue" {
				tb.Shots("offer-dark-blue")
			}
			accentText := tb.Eval(`String(` + contrastJS + `(getComputedStyle(document.querySelector(".eyebrow")).color, getComputedStyle(document.querySelector(".card")).backgroundColor))`)
			onAccent := tb.Eval(`(s => String(` + contrastJS + `(s.color, s.backgroundColor)))(getComputedStyle(document.querySelector("button.primary")))`)
			for what, ratio := range map[string]string{"accent text on the surface": accentText, "text on the accent": onAccent} {
				if r, err := strconv.ParseFloat(ratio, 64); err != nil || r < 4.5 {
					t.Errorf("palette %s, dark %v: %s at %s:1", palette, dark, what, ratio)
				}
			}
		}
	}
}

// Long texts of the seller's (its name, the product's, a link in the
// description) wrap inside a 360-pixel phone: a link in the description
// widened the offer page to 512 px, and a name of three lines squeezed the
// header's logo to a sliver.
func TestBrowserLongTextsOnAPhone(t *testing.T) {
	b := setup(t)
	b.store.mu.Lock()
	b.store.companies["company-1"].Name = "Associação Educacional Brasileira de Confeitaria, Panificação e Gastronomia Artesanal Ltda"
	desc := "Inscrições e dúvidas: https://www.escolademonstracao.com.br/cursos/confeitaria-profissional-turma-regular-2026?utm_source=parcela"
	b.offer.Product.Description = &desc
	b.offer.Product.Name = "Curso Completo de Confeitaria Profissional com Certificação Internacional e Estágio Supervisionado"
	b.offer.Name = "Turma regular noturna com aulas práticas presenciais aos sábados"
	b.store.mu.Unlock()
	order := b.buy(t, testUpfront+":boleto")
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	tb := browsertest.Open(t, b.server.URL)
	for _, path := range []string{b.offerPath(), order, parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode)} {
		tb.Do(chromedp.EmulateViewport(360, 740))
		tb.Open(path)
		if w := tb.Eval(`String(document.documentElement.scrollWidth)`); w != "360" {
			t.Errorf("%s: the page is %s px wide on a 360 px screen", path, w)
		}
		if w := tb.Eval(`String(document.querySelector(".logo").getBoundingClientRect().width)`); w != "40" {
			t.Errorf("%s: the logo is %s px wide", path, w)
		}
	}
	tb.Shots("long-texts-checkout")
	tb.Open(b.offerPath())
	tb.Shots("long-texts-offer")
}

// lowContrastJS lists the texts of the page whose color reads below WCAG
// AA on the background behind them (4.5:1, 3:1 for large text), as
// "text (ratio)" lines.
const lowContrastJS = `(() => {
	const contrast = ` + contrastJS + `;
	const opaque = c => !/^rgba\(.*,\s*0\)$/.test(c) && c !== "transparent";
	const out = [];
	for (const el of document.querySelectorAll("body *")) {
		const own = Array.from(el.childNodes).filter(n => n.nodeType === 3 && n.textContent.trim()).map(n => n.textContent.trim()).join(" ");
		if (!own || !el.getClientRects().length) continue;
		const s = getComputedStyle(el);
		if (s.visibility === "hidden" || el.closest("[hidden], .visually-hidden, .default-submit, .skip-link, .sandbox-banner")) continue;
		let bg = el;
		while (bg && !opaque(getComputedStyle(bg).backgroundColor)) bg = bg.parentElement;
		if (!bg) continue;
		const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
		const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
		const r = contrast(s.color, getComputedStyle(bg).backgroundColor);
		if (r < need) out.push(own.slice(0, 40) + " (" + r.toFixed(2) + ")");
	}
	return out.join("\n");
})()`

// Every text of the order page, the checkout and the offer page reads at
// WCAG AA on its background: the "Paga" badge read at 4.4:1.
func TestBrowserTextContrast(t *testing.T) {
	b := setup(t)
	order := b.buy(t, testFinanced+":pix")
	o := b.onlyOrder(t)
	b.pay(t, o.Billings[0].Bills[0].Payments[0].ID)
	bill := o.Billings[0].Bills[1]
	first := o.Billings[0].Bills[0]
	tb := browsertest.Open(t, b.server.URL)
	for _, dark := range []bool{false, true} {
		b.store.mu.Lock()
		b.store.companies["company-1"].Dark = dark
		b.store.mu.Unlock()
		for _, path := range []string{b.offerPath(), order, parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode),
			parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode)} {
			tb.Open(path)
			if low := tb.Eval(lowContrastJS); low != "" {
				t.Errorf("%s (dark %v): texts below AA contrast:\n%s", path, dark, low)
			}
		}
	}
}

// A checkout showing a Pix checks for its payment and shows it confirmed,
// as the order's page does: it went on showing the code of a bill paid
// minutes before, and the payer might pay again.
func TestBrowserCheckoutNoticesThePayment(t *testing.T) {
	b := setup(t)
	checkout := b.buy(t, testFinanced+":credit_card")
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(checkout)
	tb.Do(chromedp.Click(chromedp.CSS(`form.way[action$="/pix"] button`)))
	tb.WaitFor(`location.search.includes("payment=") && document.querySelector("img.qr") !== null && document.readyState === "complete"`)
	b.pay(t, b.onlyOrder(t).Billings[0].Bills[0].Payments[0].ID)
	tb.WaitFor(`document.body.innerText.includes("Pagamento confirmado!") && document.body.innerText.includes("Esta cobrança já está paga")`)
	tb.Shots("checkout-pix-paid")
}

// A sandbox boleto printed says it is a test, as on screen: the print
// style hid the banner, and a printed test boleto looked like a real one.
func TestBrowserSandboxBannerPrints(t *testing.T) {
	b := setup(t)
	order := b.buy(t, testUpfront+":boleto")
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(order)
	if _, err := chromedp.Call(tb.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatal(err)
	}
	if !tb.Is(`matchMedia("print").matches && document.querySelector(".barcode").getClientRects().length > 0`) {
		t.Fatal("not printing the boleto")
	}
	if !tb.Is(`document.querySelector(".sandbox-banner").getClientRects().length > 0`) {
		t.Error("a sandbox boleto prints without its test banner")
	}
}

// A Pix that received part of its amount is shown for what remains, with
// the note on what its code carries, readable in both palettes.
func TestBrowserPartlyPaidPix(t *testing.T) {
	b := setup(t)
	checkout, _ := b.partlyPaidCheckout(t, 50_000)
	tb := browsertest.Open(t, b.server.URL)
	for _, dark := range []bool{false, true} {
		b.store.mu.Lock()
		b.store.companies["company-1"].Dark = dark
		b.store.mu.Unlock()
		tb.Open(checkout)
		if got := tb.Eval(`document.querySelector(".pay-box .pay-amount").textContent`); got != "R$\u00a01.490,00" {
			t.Fatalf("the Pix asks %q", got)
		}
		if low := tb.Eval(lowContrastJS); low != "" {
			t.Errorf("dark %v: texts below AA contrast:\n%s", dark, low)
		}
	}
	tb.Shots("checkout-pix-partly-paid")
}

// A card tester's fifth refused card on one bill turns its card form into
// why it rests and until when, beside the Pix and boleto still offered.
func TestBrowserCardsRestAfterTooManyRefusals(t *testing.T) {
	b := setup(t)
	checkout := b.buy(t, testFinanced+":credit_card")
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(checkout)
	for i := range parcela.CardRefusalLimit {
		tb.PayByCard("4000 0000 0000 0002", "123", "1")
		// The page of this attempt, not the last one's (PayByCard waits
		// for any attempt's).
		var last string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if ps := b.onlyOrder(t).Billings[0].Bills[0].Payments; len(ps) == i+1 {
				last = ps[i].ID
				break
			}
		}
		if last == "" {
			t.Fatalf("attempt %d was not made", i+1)
		}
		tb.WaitFor(`location.search.includes("` + last + `") && document.readyState === "complete" && document.body.innerText.includes("Cartão recusado")`)
		b.clock.Advance(time.Minute)
		if i < parcela.CardRefusalLimit-1 && !tb.Is(`document.querySelector("#f-card_number") !== null`) {
			t.Fatalf("no card form after %d refusals", i+1)
		}
	}
	tb.WaitFor(`document.body.innerText.includes("não aceita cartão até")`)
	if tb.Is(`document.querySelector("#f-card_number") !== null`) || !tb.Is(`document.querySelector("form.way[action$='/pix']") !== null`) {
		t.Fatal("the resting bill still offers a card, or no Pix")
	}
	if n := len(b.onlyOrder(t).Billings[0].Bills[0].Payments); n != parcela.CardRefusalLimit {
		t.Fatalf("%d payments", n)
	}
	tb.Shots("checkout-cards-rest")
}

// A purchase whose charge failed shows the form again; sent again, it
// charges the order the first post created: one order, on its page.
func TestBrowserBuyAgainAfterAFailedCharge(t *testing.T) {
	b := setup(t, func(d *Deps) {
		d.Orders = &chargeFailing{fakeStore: d.Orders.(*fakeStore), err: parcela.Errorf(parcela.ECONFLICT, "billing changed"), left: 1}
	})
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(b.offerPath())
	tb.Do(chromedp.Click(chromedp.CSS(`input[value="` + testUpfront + `:pix"]`)))
	tb.FillCustomer(browsertest.Maria)
	tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
	tb.WaitFor(`document.querySelector(".error-summary") !== null && document.body.innerText.includes("Não foi possível concluir a compra agora")`)
	tb.Shots("offer-charge-failed")
	tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
	tb.WaitFor(`location.pathname.startsWith("/pay/orders/") && document.readyState === "complete"`)
	if o := b.onlyOrder(t); o.Status != parcela.OrderInProgress {
		t.Fatalf("order %s", o.Status)
	}
}

// An address past its orders of the hour gets its form back as typed,
// saying from when another order may be made.
func TestBrowserOrdersLimitedPerAddress(t *testing.T) {
	b := setup(t, func(d *Deps) { d.OrdersPerHour = 1 })
	b.buy(t, testUpfront+":boleto")
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(b.offerPath())
	tb.Do(chromedp.Click(chromedp.CSS(`input[value="` + testUpfront + `:boleto"]`)))
	tb.FillCustomer(browsertest.Maria)
	tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
	tb.WaitFor(`document.querySelector(".error-summary") !== null && document.body.innerText.includes("um novo pedido poderá ser feito a partir de 05/03/2026 às 11:00")`)
	// No field is in error: the summary says what went wrong, not to check them.
	if got := tb.Eval(`document.querySelector(".error-summary h2").textContent`); got != "Não foi possível concluir a compra" {
		t.Fatalf("the summary is headed %q", got)
	}
	if got := tb.Eval(`document.getElementById("f-name").value`); got != browsertest.Maria["name"] {
		t.Fatalf("the name came back as %q", got)
	}
	if n := len(b.store.orderList()); n != 1 {
		t.Fatalf("%d orders", n)
	}
	tb.Shots("offer-orders-limited")
}

// A Pix's own page, once its bill was paid by card: it says so, and asks
// for nothing.
func TestBrowserPaymentPageOfAPixPaidByCard(t *testing.T) {
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
	pix := b.onlyOrder(t).Billings[0].Bills[0].Payments[0]
	tb := browsertest.Open(t, b.server.URL)
	tb.Open("/checkout/payments/" + pix.ID)
	tb.WaitFor(`document.body.innerText.includes("Esta cobrança já foi paga de outra forma") && document.readyState === "complete"`)
	if tb.Is(`document.querySelector("form, textarea.code, img.qr") !== null`) {
		t.Fatal("the page of a Pix whose bill was paid by card still offers a code or a form")
	}
	tb.Shots("payment-pix-of-a-bill-paid-by-card")
}
