package jobs

import (
	"context"
	"net/http"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb/sqldbtest"
)

// A webhook moved to another URL starts its five days of failures afresh:
// the old address's failures do not disable it at the new one's first
// failed attempt, as "every delivery failed for 5 days".
func TestMovedWebhookFailsForFiveDaysAtItsNewURL(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newHookRig(t, e)
			r.answer = func(_ int, w http.ResponseWriter) { w.WriteHeader(500) }
			h := r.hook("/old", "post")
			t0 := r.clock.Now()
			r.work(r.event(h).ID)
			r.clock.Set(t0.Add(parcela.FailingLimit - time.Hour))
			url := r.srv.URL + "/new"
			if _, err := r.app.Webhooks.UpdateWebhook(context.Background(), r.a, h.ID, parcela.WebhookRequest{URL: &url}); err != nil {
				t.Fatal(err)
			}
			r.clock.Set(t0.Add(parcela.FailingLimit + time.Minute))
			r.work(r.event(h).ID)
			if got := r.webhook(h.ID); !got.Enabled {
				t.Fatalf("disabled at its new URL after one failed attempt there: %v", *got.DisabledReason)
			}
			r.clock.Set(t0.Add(2*parcela.FailingLimit + time.Minute))
			r.work(r.event(h).ID)
			if got := r.webhook(h.ID); got.Enabled {
				t.Fatal("still enabled after five days of failures at its new URL")
			}
		})
	}
}
