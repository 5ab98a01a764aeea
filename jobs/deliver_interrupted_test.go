package jobs

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"parcela"
	"parcela/sqldb"
)

// An attempt parcela's own stop cuts short, before any answer, is no
// failure of the receiver's: it counted toward the five days of failures,
// and one cut short by a deploy disabled a webhook failing since five days
// before; after the restart the retry its error promised was skipped ("the
// webhook is disabled"), and the event never reached the receiver (an
// audit).
func TestAttemptCutShortByAStopDoesNotDisableTheWebhook(t *testing.T) {
	t.Parallel()
	r := newHookRig(t, sqldb.SQLite)
	r.answer = failWith(500)
	h := r.hook("/hooks", "post")
	t0 := r.clock.Now()
	r.work(r.event(h).ID) // failing since t0
	r.clock.Set(t0.Add(parcela.FailingLimit))
	answered := make(chan struct{})
	r.mu.Lock()
	r.answer = func(int, http.ResponseWriter) { <-answered }
	r.mu.Unlock()
	d := r.event(h)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel) // the stop, while the receiver is silent
	jobs := r.tape.of(d.ID)
	if err := r.worker.Work(ctx, &river.Job[DeliveryArgs]{Args: jobs[len(jobs)-1]}); err != nil {
		t.Fatal(err)
	}
	close(answered)
	if w := r.webhook(h.ID); !w.Enabled {
		t.Fatalf("the webhook was disabled (%v) by an attempt parcela's stop cut short", *w.DisabledReason)
	}
	r.mu.Lock()
	r.answer = nil // back, answering at once
	r.mu.Unlock()
	sent := r.requests()
	r.work(d.ID)
	if got := r.delivery(d.ID); got.Status != parcela.DeliveryDelivered || r.requests() != sent+1 {
		t.Fatalf("after the restart: delivery %s, %d requests sent", got.Status, r.requests()-sent)
	}
}
