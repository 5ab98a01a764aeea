package jobs

import (
	"context"
	"testing"
)

// A stop whose grace has run out waits for nothing when no job runs (its
// fetchers only have to return), and keeps the past deadline when one does,
// so that the job is reported cut short and canceled.
func TestStopContextWithNoGrace(t *testing.T) {
	t.Parallel()
	past, cancel := context.WithCancel(context.Background())
	cancel()
	var j jobsInFlight
	ctx, done := j.stopContext(past)
	defer done()
	if ctx.Err() != nil {
		t.Fatal("an idle queue's stop got no time to return")
	}
	j.n.Add(1)
	ctx, done2 := j.stopContext(past)
	defer done2()
	if ctx.Err() == nil {
		t.Fatal("a running job was waited for past the deadline")
	}
	live := context.Background()
	if ctx, done := j.stopContext(live); ctx != live {
		t.Fatal("a stop with time left was given another deadline")
	} else {
		done()
	}
}
