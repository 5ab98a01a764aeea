package parcela

import (
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the time. The domain never reads the wall clock itself, so
// tests can move time through due dates, expiries and penalties.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real clock, wired in by main.
type SystemClock struct{}

// hostClock is the host's wall clock (a variable so a test can step it back).
var hostClock = time.Now

// lastSystemMilli is the latest instant SystemClock answered, in Unix
// milliseconds.
var lastSystemMilli atomic.Int64

// Now returns the current wall-clock time to the millisecond, the precision
// every instant is stored and shown with: a decision taken on the digits
// past it (late at 23:59:59.9995, after a due instant of 23:59:59.999)
// would contradict the instant stored with it. It never answers an instant
// before one it answered (the host's clock stepped back by an NTP
// correction holds it still until it passes it again): a card approved
// meanwhile was recorded paid at its attempt's instant, after the "now"
// of its recording, refused as paid in the future and voided.
func (SystemClock) Now() time.Time {
	ms := hostClock().UnixMilli()
	for {
		last := lastSystemMilli.Load()
		if ms <= last {
			return time.UnixMilli(last)
		}
		if lastSystemMilli.CompareAndSwap(last, ms) {
			return time.UnixMilli(ms)
		}
	}
}

// TestClock is a clock that only moves when told to. Safe for concurrent use.
type TestClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewTestClock returns a clock stopped at t.
func NewTestClock(t time.Time) *TestClock { return &TestClock{now: t} }

// Now returns the clock's current time.
func (c *TestClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *TestClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Advance moves the clock forward by d.
func (c *TestClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// toMillisecond is t, when sent, cut to the millisecond it is stored and
// shown with, so a request's instant is checked as it will stand: an offer
// expiring 0.5 ms from now expires now.
func toMillisecond(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	ms := t.Truncate(time.Millisecond)
	return &ms
}
