package jobs

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// A failed void waits twice as long after each attempt, up to an hour, and
// is given attempts enough never to be discarded.
func TestVoidBackoff(t *testing.T) {
	t.Parallel()
	w := &voidWorker{backoff: time.Second}
	for _, tt := range []struct {
		attempt int
		want    time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {5, 16 * time.Second}, {12, 2048 * time.Second}, {13, maxVoidBackoff}, {40, maxVoidBackoff}, {30000, maxVoidBackoff}} {
		before := time.Now()
		next := w.NextRetry(&river.Job[VoidArgs]{JobRow: &rivertype.JobRow{Attempt: tt.attempt}})
		if d := next.Sub(before); d < tt.want || d > tt.want+time.Second { // no jitter: only the call's own time
			t.Errorf("attempt %d: retry in %v, want %v", tt.attempt, d, tt.want)
		}
	}
	if voidInsertOpts("q").MaxAttempts < 10000 {
		t.Error("a void is given up on")
	}
}

// A void still running is never taken for a dead process's.
func TestVoidTimeoutUnderRescue(t *testing.T) {
	t.Parallel()
	if (&voidWorker{}).Timeout(nil) >= rescueAfter {
		t.Fatalf("a void may run %v, but River rescues a job after %v", voidTimeout, rescueAfter)
	}
}
