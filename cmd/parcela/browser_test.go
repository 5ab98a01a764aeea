package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"parcela/sqldb/sqldbtest"
	"parcela/web/browsertest"
)

// Browser tests of the payer's pages on the real server (newShop), in
// headless Chromium, on each engine. They skip without Chromium or in
// -short mode, and leave screenshots at 390×844 and 1280×800 in the
// directory they print (browsertest).

// The offer page bought with the keyboard alone, financed with a Pix down
// payment: the order page shows the charge's QR code and code, and turns
// to paid when the bank (the sandbox API) pays it. Then an upfront boleto,
// and a form with errors that keeps what was typed.
func TestBrowserBuyOnTheRealServer(t *testing.T) {
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			s := newShop(t, e, nil)
			tb := browsertest.Open(t, s.ts.sandbox)
			tb.Open(path(t, s.offerURL))
			tb.WaitFor(`document.documentElement.classList.contains("js") && document.body.innerText.toLowerCase().includes("ambiente de testes")`)
			shot := func(name string) {
				if e == "sqlite" {
					tb.Shots("real-" + name)
				}
			}
			shot("offer")

			tb.TabTo(`input[name=option]`)
			tb.ArrowTo(s.financed + ":pix")
			tb.TabTo(`select[name="installments.` + s.financed + `"]`)
			tb.ArrowTo("4")
			tb.WaitFor(`document.querySelectorAll(".option-group[data-group='` + s.financed + `'] .plan-table tbody tr").length === 4 && !document.querySelector(".plan.loading")`)
			tb.TypeCustomer(browsertest.MariaTyped)
			tb.TabTo("button.primary")
			tb.Do(chromedp.KeyEvent(kb.Enter))

			tb.WaitFor(`location.pathname.startsWith("/pay/orders/") && document.readyState === "complete"`)
			orderID := strings.TrimPrefix(tb.Eval("location.pathname"), "/pay/orders/")
			order := s.api("GET", "/orders/"+orderID, "", 200)
			if !strings.HasSuffix(order["url"].(string), tb.Eval("location.pathname + location.search")) {
				t.Fatalf("the page is at %s, the order's url is %s", tb.Eval("location.href"), order["url"])
			}
			down := s.api("GET", "/bills/"+bills(order)[0], "", 200)
			pix := payments(down)[0]
			tb.WaitFor(`document.querySelector("img.qr").complete && document.querySelector("img.qr").naturalWidth > 0`)
			if got := tb.Eval(`document.querySelector("textarea.code").value`); got != pix["barcode"] {
				t.Fatalf("the page's Pix code %q, the API's %q", got, pix["barcode"])
			}
			shot("order-waiting")
			s.api("POST", "/sandbox/payments/"+pix["id"].(string)+"/pay", "", 200)
			tb.WaitFor(`document.body.innerText.includes("Pagamento da entrada confirmado!")`)
			shot("order-paid")

			// Upfront by boleto.
			tb.Open(path(t, s.offerURL))
			tb.Do(chromedp.Click(chromedp.CSS(`input[value="` + s.upfront + `:boleto"]`)))
			tb.FillCustomer(browsertest.Maria)
			tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
			tb.WaitFor(`location.pathname.startsWith("/pay/orders/") && document.readyState === "complete"`)
			boletoOrder := s.api("GET", "/orders/"+strings.TrimPrefix(tb.Eval("location.pathname"), "/pay/orders/"), "", 200)
			boleto := payments(s.api("GET", "/bills/"+bills(boletoOrder)[0], "", 200))[0]
			tb.WaitFor(`document.querySelector("img.barcode").complete && document.querySelector("img.barcode").naturalWidth > 0`)
			if got := strings.ReplaceAll(strings.ReplaceAll(tb.Eval(`document.querySelector("[id^=linha-]").value`), ".", ""), " ", ""); got != boleto["barcode"] {
				t.Fatalf("the page's linha digitável %q, the API's %q", got, boleto["barcode"])
			}
			shot("order-boleto")
			s.api("POST", "/sandbox/payments/"+boleto["id"].(string)+"/pay", "", 200)
			tb.WaitFor(`document.body.innerText.includes("Pagamento confirmado!")`)

			// Upfront by card: the card form links to the order's page, and
			// an approved card lands there, as a Pix or boleto buyer does.
			tb.Open(path(t, s.offerURL))
			tb.Do(chromedp.Click(chromedp.CSS(`input[value="` + s.upfront + `:credit_card"]`)))
			tb.FillCustomer(browsertest.Maria)
			tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
			tb.WaitFor(`location.pathname.startsWith("/checkout/bills/") && document.readyState === "complete" && document.querySelector("#f-card_number") !== null`)
			link := tb.Eval(`(a => a ? a.getAttribute("href") : "")(document.querySelector(".order-link a"))`)
			if !strings.HasPrefix(link, "/pay/orders/") {
				t.Fatalf("the card form links to the order at %q", link)
			}
			tb.PayByCard("4111 1111 1111 1111", "123", "1")
			tb.WaitFor(`location.pathname.startsWith("/pay/orders/") && document.body.innerText.includes("Pagamento confirmado!")`)
			if got := tb.Eval(`location.pathname + location.search`); got != link {
				t.Fatalf("approved, the buyer is at %s, the link was %s", got, link)
			}

			// Errors shown by their fields, with every value kept.
			tb.Open(path(t, s.offerURL))
			tb.FillCustomer(map[string]string{"name": "Maria da Silva", "cpf": "111.111.111-12", "email": "maria@", "street": "Avenida Paulista"})
			tb.Do(chromedp.Click(chromedp.CSS("button.primary")))
			tb.WaitFor(`document.querySelector(".error-summary") !== null`)
			for id, want := range map[string]string{"f-name": "Maria da Silva", "f-cpf": "111.111.111-12", "f-email": "maria@", "f-street": "Avenida Paulista"} {
				if got := tb.Eval(`document.getElementById("` + id + `").value`); got != want {
					t.Errorf("%s = %q after errors, want %q", id, got, want)
				}
			}
			if got := tb.Eval(`document.getElementById("f-cpf-error").textContent`); !strings.Contains(got, "CPF inválido") {
				t.Errorf("CPF error %q", got)
			}
			shot("offer-errors")
		})
	}
}

// A bill's checkout_url, read from GET /bills/{id}: a refused test card
// shows why in Portuguese, an approved one pays the bill, and the seller's
// receiver gets bill.paid. Then a Pix issued on the checkout of an
// installment that had no payment, and the pages' 404 for a wrong code.
func TestBrowserCheckoutOnTheRealServer(t *testing.T) {
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			s := newShop(t, e, nil)
			hook := newReceiver(t)
			secret := s.webhook(hook)
			shot := func(tb *browsertest.Tab, name string) {
				if e == "sqlite" {
					tb.Shots("real-" + name)
				}
			}
			order := s.chargedOrder("pix", 4)
			ids := bills(order)
			down := s.api("GET", "/bills/"+ids[0], "", 200)

			tb := browsertest.Open(t, s.ts.sandbox)
			tb.Open(path(t, down["checkout_url"].(string)))
			tb.WaitFor(`document.querySelector("#f-card_number") !== null`)
			shot(tb, "checkout")
			tb.PayByCard("4000 0000 0000 0002", "123", "1")
			tb.WaitFor(`document.body.innerText.includes("Cartão recusado") && document.body.innerText.includes("O banco emissor recusou o cartão")`)
			if !tb.Is(`document.querySelector("#f-card_number").value === "" && document.querySelector("#f-card_cvv").value === ""`) {
				t.Fatal("the card form came back with the card in it")
			}
			shot(tb, "checkout-refused")
			tb.PayByCard("4111 1111 1111 1111", "123", "1")
			tb.WaitFor(`document.body.innerText.includes("Pagamento aprovado!")`)
			if tb.Is(`document.querySelector("form")`) {
				t.Fatal("a paid bill still offers a way to pay")
			}
			shot(tb, "checkout-paid")

			paid := s.api("GET", "/bills/"+ids[0], "", 200)
			var got []string
			for _, p := range payments(paid) {
				desc := p["payment_method"].(string) + " " + p["status"].(string)
				if p["card_brand"] != nil {
					desc += " " + p["card_brand"].(string) + " " + p["card_last_digits"].(string)
				}
				if p["refused_reason"] != nil {
					desc += " " + p["refused_reason"].(string)
				}
				got = append(got, desc)
			}
			if want := "pix canceled|credit_card refused visa 0002 card_declined|credit_card paid visa 1111"; paid["status"] != "paid" || strings.Join(got, "|") != want {
				t.Fatalf("bill %s with payments %v, want %s", paid["status"], got, want)
			}
			hook.event(t, secret, "bill", "paid", ids[0])

			// An installment with no payment yet gets a Pix on demand.
			inst := s.api("GET", "/bills/"+ids[1], "", 200)
			if len(payments(inst)) != 0 {
				t.Fatalf("installment 1 already has %d payments", len(payments(inst)))
			}
			tb.Open(path(t, inst["checkout_url"].(string)))
			tb.Do(chromedp.Click(chromedp.CSS(`form.way[action$="/pix"] button`)))
			tb.WaitFor(`document.querySelector("img.qr") && document.querySelector("img.qr").complete && document.querySelector("img.qr").naturalWidth > 0`)
			issued := payments(s.api("GET", "/bills/"+ids[1], "", 200))
			if len(issued) != 1 || issued[0]["payment_method"] != "pix" || issued[0]["status"] != "unpaid" {
				t.Fatalf("after the Pix on demand: %v", issued)
			}
			if got := tb.Eval(`document.querySelector("textarea.code").value`); got != issued[0]["barcode"] {
				t.Fatalf("the page's Pix code %q, the API's %q", got, issued[0]["barcode"])
			}
			shot(tb, "checkout-pix")

			// A wrong code is a 404 that shows nothing of the bill or order.
			ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
			defer cancel()
			for _, wrong := range []string{
				strings.Split(path(t, inst["checkout_url"].(string)), "?")[0] + "?code=WRONGCODE",
				strings.Split(path(t, order["url"].(string)), "?")[0] + "?code=" + strings.Repeat("A", 26),
			} {
				res, err := chromedp.Run(ctx, chromedp.NavigateResponse(s.ts.sandbox+wrong))
				if err != nil {
					t.Fatal(err)
				}
				if res.Status != 404 || !tb.Is(`document.body.innerText.includes("Página não encontrada")`) || tb.Is(`document.body.innerText.includes("Confeitaria")`) ||
					tb.Is(`document.body.innerText.includes("Maria")`) {
					t.Fatalf("%s: status %d", wrong, res.Status)
				}
			}
		})
	}
}
