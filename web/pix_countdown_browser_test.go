package web

import (
	"net/url"
	"testing"
	"time"

	"parcela/web/browsertest"
)

// A Pix's countdown says it expired at its expiry and not before (a code
// with 0.9 s left is still payable: it read "expirou"), hides the QR Code
// and the code a bank would refuse, then stops: each second after it the
// script threw, its element gone from the page, and any countdown after
// it on the page stopped too.
func TestBrowserPixCountdownStopsAtItsExpiry(t *testing.T) {
	b := setup(t)
	order := b.buy(t, testUpfront+":pix")
	p := b.onlyOrder(t).Billings[0].Bills[0].Payments[0]
	b.clock.Set(p.ExpiresAt.Add(-900 * time.Millisecond))
	u, _ := url.Parse(order)
	tb := browsertest.Open(t, b.server.URL)
	// The page's script counts from its own load, 0.9 s before the
	// expiry: "expirou" read sooner after the page was asked for is early.
	// A slow machine only makes it later, never sooner.
	asked := time.Now()
	tb.Open(u.RequestURI())
	tb.Eval(`window.countdownErrors = [], addEventListener("error", e => countdownErrors.push(e.message)), ""`)
	tb.WaitFor(`document.querySelector(".time-left").textContent.includes("Este código expirou")`)
	if d := time.Since(asked); d < 850*time.Millisecond {
		t.Fatalf("the countdown read expired %v after the page was asked for, with 0.9 s left", d)
	}
	if shown := tb.Eval(`[".qr", ".code", "[data-copy]"].filter(s => getComputedStyle(document.querySelector(".pix " + s)).display !== "none").join(" ")`); shown != "" {
		t.Errorf("the expired Pix still shows %s", shown)
	}
	time.Sleep(2500 * time.Millisecond)
	tb.Shots("order-pix-expired")
	if errs := tb.Eval(`countdownErrors.join("\n")`); errs != "" {
		t.Fatalf("the countdown fails after its expiry:\n%s", errs)
	}
}
