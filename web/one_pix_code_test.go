package web

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"parcela"
	"parcela/web/browsertest"
)

// A bill shows one Pix code. An installment of a bolepix plan whose seller
// also lists Pix (as the demo's offer does): the payer asks for the boleto
// (a Pix code inside) and for a Pix, in either order. Two boxes headed
// "Pix", each with its own code and nothing saying to pay one, had a payer
// pay the bill twice (an audit). The bolepix beside the Pix shows its
// boleto alone, and the page says to pay one of the two.
func TestOneBillShowsOnePixCode(t *testing.T) {
	t.Parallel()
	for _, order := range [][]string{{"boleto", "pix"}, {"pix", "boleto"}} {
		t.Run(strings.Join(order, " then "), func(t *testing.T) {
			t.Parallel()
			b, o, checkout := installmentPaidBoth(t, order)
			issued := b.onlyOrder(t).Billings[0].Bills[1].Payments
			var boleto *parcela.Payment
			for _, p := range issued {
				if p.Method == parcela.MethodBoleto {
					boleto = p
				}
			}
			if boleto == nil || boleto.PixCode == nil {
				t.Fatalf("no bolepix among %d payments", len(issued))
			}
			if len(issued) != 2 {
				t.Fatalf("%d payments, want the bolepix and the Pix", len(issued))
			}
			pages := map[string]string{
				"checkout": html.UnescapeString(b.get(t, checkout).body),
				"order":    html.UnescapeString(b.get(t, parcela.Links{}.OrderURL(o.ID, o.AccessCode)).body),
			}
			for name, body := range pages {
				if n := strings.Count(body, "Pix copia e cola"); n != 1 {
					t.Errorf("%s page: %d Pix copy-and-paste codes for one bill", name, n)
				}
				if !strings.Contains(body, formatLinha(*boleto.Barcode)) || strings.Contains(body, *boleto.PixCode) {
					t.Errorf("%s page: the bolepix's box is not its boleto alone", name)
				}
				if strings.Count(body, payOne) != 1 {
					t.Errorf("%s page: two codes and no word to pay one", name)
				}
			}
		})
	}
}

// The same in Chromium: the checkout of an installment with a Pix and a
// bolepix live shows one Pix code, the boleto's linha and the word to pay
// one of them.
func TestBrowserOnePixCodeBesideABolepix(t *testing.T) {
	b, _, checkout := installmentPaidBoth(t, []string{"pix", "boleto"})
	tb := browsertest.Open(t, b.server.URL)
	tb.Open(checkout)
	tb.WaitFor(`document.querySelectorAll("img.qr").length > 0 && [...document.querySelectorAll("img.qr")].every(i => i.complete && i.naturalWidth > 0)`)
	if n := tb.Eval(`String(document.querySelectorAll("#pagamento img.qr").length)`); n != "1" {
		t.Errorf("%s Pix QR Codes on the checkout", n)
	}
	if !tb.Is(`document.querySelector("#pagamento .pay-one") !== null && document.querySelector("#pagamento .pay-one").offsetHeight > 0`) {
		t.Error("no visible word to pay one of the codes")
	}
	tb.Shots("checkout-pix-beside-bolepix")
}

// installmentPaidBoth buys a financed plan whose installments take boleto
// (a bolepix) and Pix, pays its down payment, and asks the first
// installment's checkout for each method in order.
func installmentPaidBoth(t *testing.T, order []string) (*bundle, *parcela.Order, string) {
	t.Helper()
	b := setup(t)
	b.store.mu.Lock()
	b.offer.PaymentConfigurations[1].PaymentMethods = []string{"boleto", "pix"}
	b.store.mu.Unlock()
	b.buy(t, testFinanced+":pix")
	o := b.onlyOrder(t)
	b.pay(t, o.Billings[0].Bills[0].Payments[0].ID)
	inst := o.Billings[0].Bills[1]
	checkout := parcela.Links{}.CheckoutURL(inst.ID, inst.AuthenticationCode)
	for _, method := range order {
		if res := b.postCheckout(t, checkout, method, url.Values{}); res.status != http.StatusSeeOther {
			t.Fatalf("%s: %d\n%s", method, res.status, res.body)
		}
	}
	return b, o, checkout
}

// The bolepix's own payment page, beside a live Pix of its bill, shows its
// boleto alone and says to pay one: it showed its Pix code, a second one
// for the bill (a review).
func TestBolepixPageBesideALivePixShowsItsBoletoAlone(t *testing.T) {
	t.Parallel()
	b, _, _ := installmentPaidBoth(t, []string{"boleto", "pix"})
	var boleto *parcela.Payment
	for _, p := range b.onlyOrder(t).Billings[0].Bills[1].Payments {
		if p.Method == parcela.MethodBoleto {
			boleto = p
		}
	}
	if boleto == nil || boleto.PixCode == nil {
		t.Fatal("no bolepix")
	}
	body := html.UnescapeString(b.get(t, parcela.Links{}.PaymentURL(boleto.ID)).body)
	if strings.Contains(body, *boleto.PixCode) || !strings.Contains(body, payOneBeside) || !strings.Contains(body, formatLinha(*boleto.Barcode)) {
		t.Errorf("the bolepix's page beside a live Pix:\n%s", body)
	}
}
