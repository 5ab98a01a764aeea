package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parcela"
	"parcela/web/browsertest"
)

// A late installment's boleto in its settlement grace, on the order page
// and the checkout, as a 320-pixel phone shows them: the amount the bank
// takes and the note saying why, nothing past the screen.
func TestBrowserLateBoletoInItsGrace(t *testing.T) {
	b := setup(t)
	second := b.overdue(b.boletoPayableInItsGrace(t))
	b.clock.Set(time.Date(2026, 4, 11, 12, 0, 0, 0, parcela.SaoPaulo)) // Saturday after the Friday 10 April due date
	o := b.onlyOrder(t)
	tb := browsertest.Open(t, b.server.URL)
	for page, path := range map[string]string{"order": parcela.Links{}.OrderURL(o.ID, o.AccessCode),
		"checkout": parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode)} {
		tb.Open(path)
		tb.Do(chromedp.EmulateViewport(320, 640))
		tb.WaitFor(`document.readyState === "complete"`)
		if over := tb.Eval(overflowJS); over != "" {
			t.Errorf("%s at 320 px: %s", page, over)
		}
		if note := tb.Eval(`document.querySelector(".pay-note") ? document.querySelector(".pay-note").innerText : ""`); !strings.Contains(note, "o banco acrescenta a multa e os juros") {
			t.Errorf("%s shows no late note over its boleto: %q", page, note)
		}
		narrowShot(t, tb, "late-boleto-grace-"+page)
		partShot(t, tb, ".pay-box", "late-boleto-grace-"+page+"-pay")
	}
}
