package jobs

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"parcela"
	"parcela/sqldb"
	"parcela/webhook"
)

// An attempt that parcela's stop cut short before any answer is not the
// receiver's failure, and its error says the delivery is retried: it is,
// within a first failure's delay, whatever its number. The sixth, cut
// short, put the event off 10 h (an audit); the README says such
// deliveries go out after the next start.
func TestAttemptCutShortByTheStopIsRetriedSoon(t *testing.T) {
	r := newHookRig(t, sqldb.SQLite)
	got := r.delivery(r.cutShortByAStop(t, 5))
	last := got.Attempts[len(got.Attempts)-1]
	if last.Error == nil || !strings.Contains(*last.Error, "retried") {
		t.Fatalf("last attempt %+v; want the canceled one", last)
	}
	if got.Status != parcela.DeliveryRetrying || got.NextAttemptAt == nil {
		t.Fatalf("status %s, next %v", got.Status, got.NextAttemptAt)
	}
	wait := got.NextAttemptAt.Sub(last.AttemptedAt)
	if first, _ := webhook.RetryDelay(1, nil); wait > first*2 {
		t.Fatalf("attempt %d, cut short by parcela's stop, put the event off %v", got.AttemptCount, wait.Round(time.Second))
	}
}

// cutShortByAStop makes a delivery whose receiver fails its first failed
// attempts (500), then runs its next attempt until parcela's stop cancels
// it before any answer, and returns the delivery's id.
func (r *hookRig) cutShortByAStop(t *testing.T, failed int) string {
	t.Helper()
	r.answer = failWith(500)
	h := r.hook("/stopping", "post")
	d := r.event(h)
	for range failed {
		r.work(d.ID)
	}
	answered := make(chan struct{})
	defer close(answered)
	r.mu.Lock()
	r.answer = func(int, http.ResponseWriter) { <-answered }
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	jobs := r.tape.of(d.ID)
	if err := r.worker.Work(ctx, &river.Job[DeliveryArgs]{Args: jobs[len(jobs)-1]}); err != nil {
		t.Fatal(err)
	}
	return d.ID
}
