package jobs

import (
	"context"
	"time"

	"parcela"
)

// attemptSlots bounds the delivery attempts running at once in the process
// (Config.DeliveryWorkers): a batch job runs its deliveries together, so
// River's worker count alone no longer bounds them.
type attemptSlots chan struct{}

// environmentSlots gives each environment attempt slots of its own:
// sandbox receivers that hang (a developer's machine that is off) hold
// sandbox slots only, never production's.
type environmentSlots struct{ production, sandbox attemptSlots }

func newEnvironmentSlots(n int) environmentSlots {
	return environmentSlots{production: newAttemptSlots(n), sandbox: newAttemptSlots(n)}
}

// of is env's slots.
func (s environmentSlots) of(env parcela.Environment) attemptSlots {
	if env == parcela.Sandbox {
		return s.sandbox
	}
	return s.production
}

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

// tryTake takes a slot if one is free, without waiting.
func (s attemptSlots) tryTake() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

// give gives a slot back.
func (s attemptSlots) give() { <-s }
