package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// RateCounter counts requests in fixed windows for every instance that
// shares it: the store on PostgreSQL, so that a limit of 10 a second is 10
// a second across all instances, not 10 each.
type RateCounter interface {
	// AddHits adds n hits to bucket's window [start, end) and returns the
	// hits counted in it so far, n included.
	AddHits(ctx context.Context, bucket string, start, end time.Time, n int64) (int64, error)
	// DeleteEndedRateWindows deletes the windows that ended by t.
	DeleteEndedRateWindows(ctx context.Context, t time.Time) (int, error)
}

// limiter allows a number of requests per key in each fixed window: a
// second, or longer for rates below one a second. The count is shared
// through a RateCounter when there is one, and kept in this process
// otherwise (or while the shared counter fails).
//
// A shared count is claimed a tenth of the limit at a time (claim), one
// claim of a key in flight at a time (claiming): the instance spends its
// claim without asking the database again, so a
// limit of 100 a second costs ten statements a second, not a hundred. An
// instance never lets through more than it was granted, so the instances
// together never exceed the limit; a claim left unspent when its window
// ends is lost, so with several instances a key may get up to a claim
// less per instance than its limit.
//
// Fixed windows, not a token bucket: a refused request takes nothing from
// the key's allowance, so a flood of concurrent requests still gets the
// whole rate through. (The token bucket this replaces reserved a token for
// every request and cancelled the reservation when it had to wait, but a
// cancellation gives back only what no later reservation has claimed: under
// a concurrent flood almost nothing came back, and 4 connections got 11
// requests through in 10 s at 10 a second.)
type limiter struct {
	prefix string // of the buckets: the listener and what is limited
	max    int64  // requests per window
	window time.Duration
	shared RateCounter
	now    func() time.Time

	claim int64 // hits claimed from the shared count at a time

	mu      sync.Mutex
	start   int64               // current window, in ms since the epoch
	hits    map[string]int64    // local counts of the current window
	granted map[string]int64    // claimed from the shared count and not yet spent
	full    map[string]struct{} // keys refused in the current window
	// claiming holds, for a key with a claim in flight in the current
	// window, a channel closed when its answer is counted: one claim at a
	// time, the others' requests waiting for it. Claims sent together
	// were answered in any order, and one that came back over the limit
	// marked the key full while the others' grants were on their way: at
	// 100 a second, 11 concurrent requests let 10 through in the window.
	claiming map[string]chan struct{}
	// failedIn is the window in which a claim failed: the rest of it is
	// counted here without asking, or every request of a key waited in
	// turn behind the one before's failing round trip (a review).
	failedIn int64

	swept    atomic.Int64 // when ended windows were last deleted (ms)
	warnedAt atomic.Int64 // when a failing shared counter was last logged (ms)
}

// newLimiter returns a limiter of perSecond requests per key, or nil (no
// limit) when perSecond is not positive.
func newLimiter(prefix string, perSecond float64, shared RateCounter) *limiter {
	if perSecond <= 0 {
		return nil
	}
	l := &limiter{prefix: prefix, window: time.Second, shared: shared, now: time.Now,
		hits: map[string]int64{}, granted: map[string]int64{}, full: map[string]struct{}{}, claiming: map[string]chan struct{}{}}
	if perSecond >= 1 {
		l.max = int64(perSecond)
	} else {
		l.max, l.window = 1, time.Duration(math.Ceil(1/perSecond))*time.Second
	}
	l.claim = max(1, l.max/10)
	return l
}

// allow counts a request of key. When the key's window is used up it
// returns false and how long until the next window.
func (l *limiter) allow(ctx context.Context, log *slog.Logger, key string) (time.Duration, bool) {
	if l == nil {
		return 0, true
	}
	var start, end int64
	var wait time.Duration // to the next window
	clock := func() {
		now := l.now().UnixMilli()
		start = now - now%l.window.Milliseconds()
		end = start + l.window.Milliseconds()
		wait = time.Duration(end-now) * time.Millisecond
	}
	clock()
	bucket := l.prefix + key
	refuse := func() (time.Duration, bool) {
		l.full[bucket] = struct{}{}
		return wait, false
	}
	l.mu.Lock()
	for {
		l.roll(start)
		if _, full := l.full[bucket]; full {
			defer l.mu.Unlock()
			return refuse()
		}
		if l.shared == nil || l.failedIn == start {
			break
		}
		if l.granted[bucket] > 0 {
			l.granted[bucket]--
			l.mu.Unlock()
			return 0, true
		}
		answered, busy := l.claiming[bucket]
		if !busy {
			break
		}
		l.mu.Unlock()
		select {
		case <-answered:
		case <-ctx.Done():
			// Its request does no more work (its client left, or its
			// deadline passed); refused, it was told its key's limit was
			// used up, and retried.
			return 0, true
		}
		l.mu.Lock()
		// The claim may have been answered after its window ended: the
		// request is judged in the window it is decided in, and told the
		// wait from now. Judged in the window it arrived in, it was
		// refused by that window's spent allowance in a fresh one.
		clock()
	}
	var answered chan struct{}
	if l.shared != nil && l.failedIn != start {
		answered = make(chan struct{})
		l.claiming[bucket] = answered
	}
	l.mu.Unlock()

	if answered != nil {
		total, err := l.shared.AddHits(ctx, bucket, time.UnixMilli(start), time.UnixMilli(end), l.claim)
		l.mu.Lock()
		if l.claiming[bucket] == answered {
			delete(l.claiming, bucket)
		}
		if err != nil && ctx.Err() == nil && l.start == start {
			l.failedIn = start
		}
		close(answered)
		if err == nil {
			passed := l.spendClaim(bucket, start, total)
			l.mu.Unlock()
			l.sweep(ctx, log, start)
			if !passed {
				return wait, false
			}
			return 0, true
		}
		l.mu.Unlock()
		if ctx.Err() == nil {
			l.warn(log, start, err)
		}
	}
	// No shared count, or it failed: this instance counts on its own.
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll(start)
	if l.hits[bucket]++; l.hits[bucket] > l.max {
		return refuse()
	}
	return 0, true
}

// spendClaim counts the answer of a claim of bucket's window beginning at
// start, total the shared count with it, and tells whether its request
// passes, spending one hit of what was granted. l.mu is held.
func (l *limiter) spendClaim(bucket string, start, total int64) bool {
	grant := max(0, min(l.claim, l.max-(total-l.claim)))
	if l.start != start { // the window ended meanwhile: the rest of its claim is lost
		return grant > 0
	}
	// The only claim in flight came back empty: the window's allowance is
	// spent, by this instance or the others.
	if l.granted[bucket] += grant; l.granted[bucket] == 0 {
		l.full[bucket] = struct{}{}
		return false
	}
	l.granted[bucket]--
	return true
}

// roll starts the window beginning at start when it is later than the
// current one. l.mu is held.
func (l *limiter) roll(start int64) {
	if start > l.start {
		l.start = start
		clear(l.hits)
		clear(l.granted)
		clear(l.full)
		clear(l.claiming) // a claim of the last window is answered for it alone
	}
}

// exhausted tells, without counting, whether key was refused in the
// current window by this instance.
func (l *limiter) exhausted(key string) (time.Duration, bool) {
	if l == nil {
		return 0, false
	}
	now := l.now().UnixMilli()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now-l.start >= l.window.Milliseconds() {
		return 0, false
	}
	if _, ok := l.full[l.prefix+key]; !ok {
		return 0, false
	}
	return time.Duration(l.start+l.window.Milliseconds()-now) * time.Millisecond, true
}

// rate is the limit in requests per second, for messages.
func (l *limiter) rate() string {
	return strconv.FormatFloat(float64(l.max)/l.window.Seconds(), 'f', -1, 64)
}

// sweep deletes the shared counter's ended windows about once a minute.
func (l *limiter) sweep(ctx context.Context, log *slog.Logger, start int64) {
	last := l.swept.Load()
	if start-last < time.Minute.Milliseconds() || !l.swept.CompareAndSwap(last, start) {
		return
	}
	if _, err := l.shared.DeleteEndedRateWindows(ctx, time.UnixMilli(start)); err != nil && ctx.Err() == nil {
		log.Warn("delete ended rate windows", "error", err.Error())
	}
}

// warn logs a failing shared counter once a minute: until it answers
// again, each instance counts on its own.
func (l *limiter) warn(log *slog.Logger, start int64, err error) {
	last := l.warnedAt.Load()
	if start-last >= time.Minute.Milliseconds() && l.warnedAt.CompareAndSwap(last, start) {
		log.Warn("rate counter failed; counting in this instance only", "error", err.Error())
	}
}

// addressKey names a client address in a bucket without storing it.
func addressKey(addr string) string {
	sum := sha256.Sum256([]byte(addr))
	return hex.EncodeToString(sum[:12])
}
