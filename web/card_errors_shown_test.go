package web

import (
	"testing"

	"github.com/chromedp/chromedp"

	"parcela"
	"parcela/web/browsertest"
)

// A card form sent with an error opens at the card's section, and says
// there that the card was not charged: the page opened at its top, where
// a phone showed the bill and the Pix's QR Code, and no word of the card
// (its errors were four screens below).
func TestBrowserCardErrorsOpenAtTheCardForm(t *testing.T) {
	b := setup(t)
	b.buy(t, testUpfront+":pix")
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	tb := browsertest.Open(t, b.server.URL)
	tb.Do(chromedp.EmulateViewport(390, 844))
	tb.Open(parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode))
	tb.Do(chromedp.SendKeys(chromedp.ID("f-card_number"), "1234"), chromedp.Click(chromedp.CSS(".card-form button.primary")))
	tb.WaitFor(`document.querySelector("#f-card_number-error") !== null && document.readyState === "complete"`)
	tb.ViewportShot("card-error-phone")
	inView := func(css string) bool {
		return tb.Is(`(r => r.top >= 0 && r.bottom <= innerHeight)(document.querySelector(` + "`" + css + "`" + `).getBoundingClientRect())`)
	}
	if !inView("#cartao [role=alert]") || !tb.Is(`document.querySelector("#cartao [role=alert]").innerText.includes("O cartão não foi cobrado")`) {
		t.Fatalf("the card's error is not said where the page opens (scrolled to %s px)", tb.Eval(`String(scrollY)`))
	}
	if !inView("#f-card_number") {
		t.Fatal("the card's number is not on the screen the page opens at")
	}
	if low := tb.Eval(lowContrastJS); low != "" {
		t.Errorf("texts below WCAG AA on the card's errors:\n%s", low)
	}
}

// A refused card opens at the card's section too (#cartao), and its
// refusal is said there: it was said at the page's top, above a Pix's QR
// Code, screens above where a phone opened the page.
func TestBrowserCardRefusalSaidAtTheCardForm(t *testing.T) {
	b := setup(t)
	b.buy(t, testUpfront+":pix")
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	tb := browsertest.Open(t, b.server.URL)
	tb.Do(chromedp.EmulateViewport(390, 844))
	tb.Open(parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode))
	tb.PayByCard("4000 0000 0000 0002", "123", "1")
	tb.WaitFor(`document.body.innerText.includes("Cartão recusado")`)
	tb.ViewportShot("card-refused-phone")
	if !tb.Is(`(el => el && (r => r.top >= 0 && r.bottom <= innerHeight)(el.getBoundingClientRect()))(document.querySelector("#cartao [role=status]"))`) ||
		!tb.Is(`document.querySelector("#cartao").innerText.includes("O banco emissor recusou o cartão")`) {
		t.Fatalf("the refusal is not said where the page opens (scrolled to %s px)", tb.Eval(`String(scrollY)`))
	}
}
