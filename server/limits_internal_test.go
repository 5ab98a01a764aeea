package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var quiet = slog.New(slog.DiscardHandler)

// The limiter itself under a dense concurrent flood (no HTTP in between):
// every window lets its whole allowance through. A token bucket that
// reserves and cancels let 10 through in 3 s here, all from its burst.
func TestLimiterUnderConcurrentFlood(t *testing.T) {
	t.Parallel()
	l := newLimiter("test:", 10, nil)
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	begin := time.Now()
	stop := begin.Add(2900 * time.Millisecond)
	var passed atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if _, ok := l.allow(context.Background(), quiet, "k"); ok {
					passed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	// Every second the flood touched let 10 through (the last one it may
	// have touched after its last request).
	if n, windows := int64(passed.Load()), time.Now().Unix()-begin.Unix()+1; n < 10*(windows-1) || n > 10*windows {
		t.Fatalf("%d passed in %d windows of 10", n, windows)
	}
}

// failingCounter is a shared counter whose database is down.
type failingCounter struct{ calls atomic.Int32 }

func (f *failingCounter) AddHits(context.Context, string, time.Time, time.Time, int64) (int64, error) {
	f.calls.Add(1)
	return 0, errors.New("connection refused")
}

func (f *failingCounter) DeleteEndedRateWindows(context.Context, time.Time) (int, error) {
	return 0, nil
}

// step is a request at an offset from a whole second (ms), and whether
// it passes.
type step struct {
	at   int64
	pass bool
}

func TestLimiterWindows(t *testing.T) {
	t.Parallel()
	base := time.UnixMilli(1_800_000_000_000) // a whole second, and a whole two
	tests := []struct {
		name      string
		perSecond float64
		shared    RateCounter
		steps     []step
		rate      string
	}{
		{"two a second", 2, nil, []step{{0, true}, {10, true}, {20, false}, {999, false}, {1000, true}, {1500, true}, {1600, false}}, "2"},
		{"fractions round down", 2.7, nil, []step{{0, true}, {1, true}, {2, false}}, "2"},
		{"one every two seconds", 0.5, nil, []step{{0, true}, {1000, false}, {1999, false}, {2000, true}, {2001, false}}, "0.5"},
		{"a failing shared counter counts here", 1, &failingCounter{}, []step{{0, true}, {1, false}, {1000, true}}, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newLimiter("test:", tt.perSecond, tt.shared)
			for _, s := range tt.steps {
				l.now = func() time.Time { return base.Add(time.Duration(s.at) * time.Millisecond) }
				wait, ok := l.allow(context.Background(), quiet, "k")
				if ok != s.pass {
					t.Fatalf("at %d ms: passed %v, want %v", s.at, ok, s.pass)
				}
				if !ok {
					if left, full := l.exhausted("k"); !full || left != wait || wait <= 0 {
						t.Fatalf("at %d ms: exhausted %v %v, allow waits %v", s.at, left, full, wait)
					}
				}
				if _, full := l.exhausted("other"); full {
					t.Fatal("another key is exhausted")
				}
			}
			if l.rate() != tt.rate {
				t.Fatalf("rate %s, want %s", l.rate(), tt.rate)
			}
		})
	}
	if newLimiter("test:", 0, nil) != nil {
		t.Fatal("a zero rate limits")
	}
	var none *limiter
	if _, ok := none.allow(context.Background(), quiet, "k"); !ok {
		t.Fatal("no limiter refused")
	}
}

// memoryCounter is a shared counter in memory: the instances of a test
// share it as they would share the database.
type memoryCounter struct {
	mu    sync.Mutex
	hits  map[string]int64
	calls int
}

func (m *memoryCounter) AddHits(_ context.Context, bucket string, start, _ time.Time, n int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hits == nil {
		m.hits = map[string]int64{}
	}
	m.calls++
	k := bucket + "@" + start.String()
	m.hits[k] += n
	return m.hits[k], nil
}

func (m *memoryCounter) DeleteEndedRateWindows(context.Context, time.Time) (int, error) {
	return 0, nil
}

// A shared limit is claimed a tenth at a time: 100 a second costs the
// database ten statements, lets exactly 100 through on one instance, and
// a refused key asks the database nothing more in its window.
func TestLimiterClaimsATenthAtATime(t *testing.T) {
	t.Parallel()
	base := time.UnixMilli(1_800_000_000_000)
	counter := &memoryCounter{}
	l := newLimiter("test:", 100, counter)
	l.now = func() time.Time { return base.Add(10 * time.Millisecond) }
	passed := 0
	for range 150 {
		if _, ok := l.allow(context.Background(), quiet, "k"); ok {
			passed++
		}
	}
	if passed != 100 || counter.calls != 11 {
		t.Fatalf("%d passed with %d statements; want 100 with 11 (ten claims and the refused one)", passed, counter.calls)
	}
	l.now = func() time.Time { return base.Add(time.Second) }
	if _, ok := l.allow(context.Background(), quiet, "k"); !ok || counter.calls != 12 {
		t.Fatalf("the next window: passed %v after %d statements", ok, counter.calls)
	}
}

// Instances sharing a count never let more than the limit through
// together; each may leave at most a claim less one unspent.
func TestLimiterInstancesNeverExceedTheLimit(t *testing.T) {
	t.Parallel()
	base := time.UnixMilli(1_800_000_000_000)
	counter := &memoryCounter{}
	instances := []*limiter{newLimiter("test:", 100, counter), newLimiter("test:", 100, counter), newLimiter("test:", 100, counter)}
	var passed atomic.Int32
	var wg sync.WaitGroup
	for _, l := range instances {
		l.now = func() time.Time { return base.Add(500 * time.Millisecond) }
		for range 4 {
			wg.Go(func() {
				for range 100 {
					if _, ok := l.allow(context.Background(), quiet, "k"); ok {
						passed.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	if n := passed.Load(); n > 100 || n < 100-3*9 {
		t.Fatalf("%d passed through three instances of a limit of 100", n)
	}
}

// Concurrent requests that all find the claim spent claim together, and
// some claims come too late for a grant: those requests spend what the
// others were granted instead of being refused.
func TestLimiterConcurrentClaimsShareTheirGrants(t *testing.T) {
	t.Parallel()
	base := time.UnixMilli(1_800_000_000_000)
	counter := &slowCounter{}
	l := newLimiter("test:", 100, counter)
	l.now = func() time.Time { return base.Add(10 * time.Millisecond) }
	var passed atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if _, ok := l.allow(context.Background(), quiet, "k"); ok {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := passed.Load(); n != 64 {
		t.Fatalf("%d of 64 concurrent requests passed a limit of 100", n)
	}
}

// slowCounter answers after every concurrent caller has asked, so their
// claims overlap.
type slowCounter struct{ memoryCounter }

func (s *slowCounter) AddHits(ctx context.Context, bucket string, start, end time.Time, n int64) (int64, error) {
	time.Sleep(20 * time.Millisecond)
	return s.memoryCounter.AddHits(ctx, bucket, start, end, n)
}
