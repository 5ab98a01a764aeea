package web

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parcela"
	"parcela/web/browsertest"
)

// narrowShot saves the whole page as a 320-pixel phone shows it.
func narrowShot(t *testing.T, tb *browsertest.Tab, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if dir := browsertest.ScreenshotDir(); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+"-320.png"), png, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// partShot saves the part of the page sel selects, if any.
func partShot(t *testing.T, tb *browsertest.Tab, sel, name string) {
	t.Helper()
	dir := browsertest.ScreenshotDir()
	if dir == "" || !tb.Is(`document.querySelector("`+sel+`") !== null`) {
		return
	}
	ctx, cancel := context.WithTimeout(tb.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", sel, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+"-320.png"), png, 0o644); err != nil {
		t.Error(err)
	}
}

// overflowJS lists the elements wider than the screen or past its right
// edge, and the page's own width when wider.
const overflowJS = `(() => {
	const w = document.documentElement.clientWidth, out = [];
	if (document.documentElement.scrollWidth > w) out.push("page " + document.documentElement.scrollWidth);
	for (const el of document.querySelectorAll("main *")) {
		const r = el.getBoundingClientRect();
		if (r.width && r.right > w + 0.5 && !el.closest(".visually-hidden, .default-submit, [hidden]")) out.push(el.tagName.toLowerCase() + "." + el.className + " " + Math.round(r.right));
	}
	return out.slice(0, 8).join("; ");
})()`

// The pages at their edges on a 320-pixel phone, the narrowest in use: the
// largest amount a bill carries (R$ 99.999.999,99, a boleto's most), in
// plans, card installments and codes; an offer of one cent; and a
// customer's name of 255 letters without a space. Nothing runs past the
// screen.
func TestBrowserEdgesOnA320PixelPhone(t *testing.T) {
	long := strings.Repeat("Maria", 49) + "M" // 246 letters, one word: with " da Silva", 255
	for name, tt := range map[string]struct {
		amount int64
		option string
	}{
		"largest financed pix":   {parcela.MaxAmountCents, testFinanced + ":pix"},
		"largest upfront boleto": {parcela.MaxAmountCents, testUpfront + ":boleto"},
		"largest card":           {parcela.MaxAmountCents, testUpfront + ":credit_card"},
		"one cent boleto":        {1, testUpfront + ":boleto"},
	} {
		t.Run(name, func(t *testing.T) {
			b := setup(t)
			b.store.mu.Lock()
			b.offer.AmountCents, b.offer.Product.FullAmountCents = tt.amount, tt.amount
			b.store.mu.Unlock()
			page := b.get(t, b.offerPath())
			form := buyForm(t, page.body, tt.option, nil)
			form.Set("name", long+" da Silva")
			res := b.post(t, b.offerPath(), form)
			if res.status != 303 {
				t.Fatalf("buy: status %d\n%s", res.status, res.body)
			}
			o := b.onlyOrder(t)
			bill := o.Billings[0].Bills[0]
			tb := browsertest.Open(t, b.server.URL)
			tb.Do(chromedp.EmulateViewport(320, 640))
			paths := map[string]string{"offer": b.offerPath(), "order": (parcela.Links{}).OrderURL(o.ID, o.AccessCode),
				"checkout": (parcela.Links{}).CheckoutURL(bill.ID, bill.AuthenticationCode)}
			if len(bill.Payments) > 0 {
				paths["payment"] = "/checkout/payments/" + bill.Payments[0].ID
			}
			for page, path := range paths {
				tb.Open(path)
				tb.Do(chromedp.EmulateViewport(320, 640))
				tb.WaitFor(`document.readyState === "complete"`)
				if over := tb.Eval(overflowJS); over != "" {
					t.Errorf("%s at 320 px: %s", page, over)
				}
				shot := "edge-" + strings.ReplaceAll(name, " ", "-") + "-" + page
				narrowShot(t, tb, shot)
				partShot(t, tb, ".product", shot+"-product")
				partShot(t, tb, ".option-group[data-group='"+testFinanced+"']", shot+"-plan")
				partShot(t, tb, ".bills-table", shot+"-bills")
				partShot(t, tb, ".card-form", shot+"-card")
				partShot(t, tb, ".pay-box", shot+"-pay")
			}
		})
	}
}
