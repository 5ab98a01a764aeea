package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parcela/jobs"
)

// slowReceiver answers after delay (or when the test ends), counting the
// requests it holds at once.
type slowReceiver struct {
	srv              *httptest.Server
	inFlight, most   atomic.Int32
	mu               sync.Mutex
	firstArrivalTime time.Time
}

func newSlowReceiver(t *testing.T, delay time.Duration) *slowReceiver {
	rc := &slowReceiver{}
	done := make(chan struct{})
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := rc.inFlight.Add(1)
		defer rc.inFlight.Add(-1)
		for m := rc.most.Load(); n > m && !rc.most.CompareAndSwap(m, n); m = rc.most.Load() {
		}
		rc.mu.Lock()
		if rc.firstArrivalTime.IsZero() {
			rc.firstArrivalTime = time.Now()
		}
		rc.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-done:
		}
		w.WriteHeader(204)
	}))
	t.Cleanup(rc.srv.Close)
	t.Cleanup(func() { close(done) }) // before Close, which waits for handlers
	return rc
}

func (rc *slowReceiver) firstArrival() time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.firstArrivalTime
}

// One company whose receivers answer just before the delivery timeout (the
// 14 s of 15 s, scaled down) cannot hold up another company's deliveries:
// it gets at most its share of the workers, and the other company's event
// arrives within seconds, where it would otherwise wait behind the whole
// slow backlog.
func TestSlowCompanyDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		const timeout, workers, share, hooks = 3 * time.Second, 4, 2, 12
		slow := newSlowReceiver(t, timeout*14/15)
		healthy := newSlowReceiver(t, 0)
		for i := range hooks {
			b.hook(t, fmt.Sprintf("%s/slow/%d", slow.srv.URL, i), "order", "in_progress")
		}
		b.send(b.sandbox.URL, b.otherToken, "POST", "/external_api/v1/webhooks", map[string]any{"name": "healthy", "url": healthy.srv.URL + "/ok",
			"entity": "order", "events": []string{"in_progress"}, "verb": "post"}, nil).want(t, 201)
		b.startQueue(t, jobs.Config{WebhookAllowedCIDRs: "127.0.0.0/8", WebhookTimeout: timeout, DeliveryWorkers: workers, DeliveriesPerCompany: share}, false)

		// The slow company's event fans out to 12 receivers, 6 rounds of
		// its share; without a share they would take every worker for 3.
		offer, order := b.order()
		up, _ := configs(offer)
		b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, "pix", 1)).want(t, 200)
		eventually(t, 10*time.Second, "the slow company holds its share", func() bool { return slow.inFlight.Load() == share })

		// Then the other company's event.
		as := func(method, path string, body any) map[string]any {
			return b.send(b.sandbox.URL, b.otherToken, method, "/external_api/v1"+path, body, nil).JSON(t)
		}
		product := as("POST", "/products", productBody())
		otherOffer := as("POST", "/offers", offerBody(product["id"].(string)))
		otherOrder := as("POST", "/orders", orderBody(otherOffer["id"].(string)))
		otherUp, _ := configs(otherOffer)
		charged := time.Now()
		b.send(b.sandbox.URL, b.otherToken, "POST", "/external_api/v1/orders/"+otherOrder["id"].(string)+"/charge", chargeBody(otherUp, "pix", 1), nil).want(t, 200)
		eventually(t, 4*time.Second, "the healthy company's event delivered", func() bool { return !healthy.firstArrival().IsZero() })
		t.Logf("delivered %v after the charge", healthy.firstArrival().Sub(charged))
		if m := slow.most.Load(); m > share {
			t.Fatalf("the slow company held %d workers at once, over its share of %d", m, share)
		}
	})
}
