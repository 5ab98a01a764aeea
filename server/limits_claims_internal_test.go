package server

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// laggingCounter is a shared counter whose answers take a random while, so
// that concurrent claims come back in any order, as round trips to
// PostgreSQL do.
type laggingCounter struct {
	RateCounter
	calls atomic.Int32
}

func (c *laggingCounter) AddHits(ctx context.Context, bucket string, start, end time.Time, n int64) (int64, error) {
	c.calls.Add(1)
	total, err := c.RateCounter.AddHits(ctx, bucket, start, end, n)
	time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
	return total, err
}

// A flood of concurrent requests within one window of a shared limit gets
// exactly the limit through, on a counter in memory with answers out of
// order and on each engine's own. Claims sent together came back in any
// order, and one over the limit marked the key full while the grants of
// the others were on their way: at 100 a second (production's default),
// 11 requests at once let 10 through in the whole window, and on
// PostgreSQL whole seconds let 22 to 88 through.
func TestSharedLimiterFloodGetsTheWholeLimit(t *testing.T) {
	t.Parallel()
	counters := map[string]RateCounter{"memory": &memoryCounter{}}
	for _, e := range sqldbtest.Engines() {
		counters[string(e)] = sqldbtest.Open(t, e, sqldb.Config{})
	}
	for name, shared := range counters {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			counter := &laggingCounter{RateCounter: shared}
			l := newLimiter("flood:", 100, counter)
			at := time.UnixMilli(1_800_000_000_000).Add(250 * time.Millisecond)
			l.now = func() time.Time { return at }
			key := "token-" + sqldbtest.Suffix()
			var passed atomic.Int32
			var wg sync.WaitGroup
			for range 300 {
				wg.Go(func() {
					if _, ok := l.allow(context.Background(), quiet, key); ok {
						passed.Add(1)
					}
				})
			}
			wg.Wait()
			if n := passed.Load(); n != 100 {
				t.Fatalf("%d of 300 concurrent requests passed in a window of 100", n)
			}
			// A tenth at a time: ten claims grant the 100, and one more
			// finds the window spent; the key then asks nothing more.
			if calls := counter.calls.Load(); calls != 11 {
				t.Fatalf("%d claims for a window of 100 claimed 10 at a time", calls)
			}
			if _, ok := l.allow(context.Background(), quiet, key); ok || counter.calls.Load() != 11 {
				t.Fatal("a spent key passed, or asked the counter again")
			}
		})
	}
}

// gatedFailingCounter is a shared counter whose database is down: each
// call waits for gate (if set), then fails.
type gatedFailingCounter struct {
	gate  chan struct{}
	calls atomic.Int32
}

func (f *gatedFailingCounter) AddHits(context.Context, string, time.Time, time.Time, int64) (int64, error) {
	f.calls.Add(1)
	if f.gate != nil {
		<-f.gate
	}
	return 0, errors.New("database down")
}

func (f *gatedFailingCounter) DeleteEndedRateWindows(context.Context, time.Time) (int, error) {
	return 0, nil
}

// While the shared counter fails, the rest of the window is counted in
// this instance without asking it again: with one claim of a key in
// flight at a time, each waiting request made its own failing call in
// turn, queued behind the one before (a review: 20 requests, a counter
// failing in 100 ms, took a second, and half were refused at their
// deadline). A request whose context ends while it waits is not refused:
// refused, it was told its key's limit was used up (429), and retried.
func TestFailingSharedCounterNeitherQueuesNorRefuses(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1_800_000_000_000)
	counter := &gatedFailingCounter{}
	l := newLimiter("down:", 100, counter)
	l.now = func() time.Time { return at }
	var passed atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, ok := l.allow(context.Background(), quiet, "token"); ok {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if passed.Load() != 20 || counter.calls.Load() != 1 {
		t.Fatalf("%d of 20 passed, %d calls to a failing counter in one window", passed.Load(), counter.calls.Load())
	}

	gated := &gatedFailingCounter{gate: make(chan struct{})}
	l = newLimiter("down:", 100, gated)
	l.now = func() time.Time { return at }
	claimed := make(chan bool)
	go func() {
		_, ok := l.allow(context.Background(), quiet, "token")
		claimed <- ok
	}()
	for gated.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := l.allow(gone, quiet, "token"); !ok {
		t.Error("a request whose client left while it waited for a claim was refused as over its limit")
	}
	close(gated.gate)
	if !<-claimed {
		t.Error("the claiming request was refused when the counter failed")
	}
}

// lateFullCounter answers the first window's claims, once gate opens, with
// that window spent; any other window's from memory.
type lateFullCounter struct {
	memoryCounter
	first int64
	gate  chan struct{}
	calls atomic.Int32
}

func (c *lateFullCounter) AddHits(ctx context.Context, bucket string, start, end time.Time, n int64) (int64, error) {
	c.calls.Add(1)
	if start.UnixMilli() == c.first {
		<-c.gate
		return 1000, nil
	}
	return c.memoryCounter.AddHits(ctx, bucket, start, end, n)
}

// A request that waited for another's claim, answered after the window
// ended, is judged in the window it is decided in: the last window's
// allowance was spent, the new one's is not, and it passes. It was
// refused by the old window's answer, and told to wait the few
// milliseconds that window had left when it arrived.
func TestClaimAnsweredAfterItsWindowJudgesTheWaiterInTheNewOne(t *testing.T) {
	t.Parallel()
	// In a bubble, so that synctest.Wait returns only once the claimer
	// waits at the counter's gate, and then once the waiter waits for the
	// claim: opened earlier, the waiter could arrive after the answer.
	synctest.Test(t, func(t *testing.T) {
		first := time.UnixMilli(1_800_000_000_000)
		counter := &lateFullCounter{first: first.UnixMilli(), gate: make(chan struct{})}
		l := newLimiter("late:", 100, counter)
		var reads atomic.Int32
		// The claimer and the waiter read the clock in the first window's
		// last 10 ms; every later read is 200 ms into the next window.
		l.now = func() time.Time {
			if reads.Add(1) <= 2 {
				return first.Add(990 * time.Millisecond)
			}
			return first.Add(1200 * time.Millisecond)
		}
		claimer := make(chan bool)
		go func() {
			_, ok := l.allow(context.Background(), quiet, "token")
			claimer <- ok
		}()
		synctest.Wait()
		type answer struct {
			wait time.Duration
			ok   bool
		}
		waiter := make(chan answer)
		go func() {
			wait, ok := l.allow(context.Background(), quiet, "token")
			waiter <- answer{wait, ok}
		}()
		synctest.Wait()
		close(counter.gate)
		if <-claimer {
			t.Error("the claimer passed on a spent window")
		}
		if got := <-waiter; !got.ok {
			t.Fatalf("the waiter was refused (retry after %v) in a new window of 100", got.wait)
		}
	})
}
