package web

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parcela/web/browsertest"
)

// statusCounter records the status of each check a page's script sends
// (the requests with If-None-Match) before handing it to h.
type statusCounter struct {
	h                  http.Handler
	notModified, whole atomic.Int64
}

func (c *statusCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("If-None-Match") == "" {
		c.h.ServeHTTP(w, r)
		return
	}
	rec := &statusRecorder{ResponseWriter: w}
	c.h.ServeHTTP(rec, r)
	if rec.status == http.StatusNotModified {
		c.notModified.Add(1)
	} else {
		c.whole.Add(1)
	}
}

// In Chromium, a checkout waiting for its Pix checks with its state as
// the tag: answered 304 without the page while nothing changed, and still
// shows the payment once it is made.
func TestBrowserWaitingPageChecksWithoutThePage(t *testing.T) {
	b := setup(t)
	counter := &statusCounter{h: b.server.Config.Handler}
	srv := httptest.NewServer(counter)
	t.Cleanup(srv.Close)
	checkout := b.buy(t, testFinanced+":credit_card")
	tb := browsertest.Open(t, srv.URL)
	tb.Open(checkout)
	tb.Do(chromedp.Click(chromedp.CSS(`form.way[action$="/pix"] button`)))
	tb.WaitFor(`location.search.includes("payment=") && document.querySelector("img.qr") !== null && document.readyState === "complete"`)
	start := counter.notModified.Load()
	time.Sleep(2500 * time.Millisecond)
	if n := counter.notModified.Load() - start; n < 1 || counter.whole.Load() != 0 {
		t.Fatalf("in 2.5 s of a 1 s check: %d answered 304, %d with the page", n, counter.whole.Load())
	}
	b.pay(t, b.onlyOrder(t).Billings[0].Bills[0].Payments[0].ID)
	tb.WaitFor(`document.body.innerText.includes("Pagamento confirmado!") && document.body.innerText.includes("Esta cobrança já está paga")`)
	if counter.whole.Load() < 1 {
		t.Fatal("the page noticed the payment without a check answered with the page")
	}
}
