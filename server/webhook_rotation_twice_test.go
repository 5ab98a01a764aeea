package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela/webhook"
)

// Two secrets at most sign (api/openapi.yaml, Webhooks): the current one
// and the one its rotation replaced. A second rotation within the first's
// 24 h ends the first one's overlap: the creation secret S0 no longer
// verifies a minute after its rotation, as documented (an audit read the
// 24 h as every replaced secret's own).
func TestWebhookSecondRotationEndsTheFirstOverlap(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		var mu sync.Mutex
		type got struct {
			h    http.Header
			body []byte
		}
		var reqs []got
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			reqs = append(reqs, got{r.Header.Clone(), body})
			mu.Unlock()
			w.WriteHeader(204)
		}))
		t.Cleanup(srv.Close)
		hook := b.hook(t, srv.URL+"/o", "order", "in_progress")
		s0 := hook["secret"].(string)
		id := hook["id"].(string)
		s1 := b.call("POST", "/external_api/v1/webhooks/"+id+"/rotate_secret", nil).want(t, 200).JSON(t)["secret"].(string)
		b.clock.Advance(time.Minute)
		s2 := b.call("POST", "/external_api/v1/webhooks/"+id+"/rotate_secret", nil).want(t, 200).JSON(t)["secret"].(string)
		b.startJobs(t, "127.0.0.0/8", 5*time.Second)
		offer, order := b.order()
		up, _ := configs(offer)
		b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, "pix", 1)).want(t, 200)
		eventually(t, 20*time.Second, "order:in_progress delivered", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(reqs) > 0
		})
		mu.Lock()
		r := reqs[0]
		mu.Unlock()
		now := time.Now()
		for name, s := range map[string]string{"S2 (current)": s2, "S1 (rotated away 1 min ago)": s1} {
			if err := webhook.Verify(s, r.h, r.body, now, 5*time.Minute); err != nil {
				t.Errorf("%s does not verify: %v", name, err)
			}
		}
		if err := webhook.Verify(s0, r.h, r.body, now, 5*time.Minute); err == nil {
			t.Errorf("S0, replaced by the first of two rotations, still verifies; webhook-signature: %s", r.h.Get("webhook-signature"))
		}
		if n := len(strings.Fields(r.h.Get("webhook-signature"))); n != 2 {
			t.Errorf("%d signatures, want 2: %s", n, r.h.Get("webhook-signature"))
		}
	})
}
