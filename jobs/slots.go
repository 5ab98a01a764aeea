package jobs

import (
	"context"
	"time"
)

// attemptSlots bounds the delivery attempts running at once in the process
// (Config.DeliveryWorkers): a batch job runs its deliveries together, so
// River's worker count alone no longer bounds them.
type attemptSlots chan struct{}

// slotWait is how long an attempt waits for a slot before it is deferred:
// fast receivers free slots within milliseconds, and a job must still fit
// its attempts in its timeout.
const slotWait = time.Second

func newAttemptSlots(n int) attemptSlots { return make(attemptSlots, n) }

// take takes a slot, waiting up to slotWait; false if none came.
func (s attemptSlots) take(ctx context.Context) bool {
	select {
	case s <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(slotWait)
	defer t.Stop()
	select {
	case s <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// give gives a slot back.
func (s attemptSlots) give() { <-s }
