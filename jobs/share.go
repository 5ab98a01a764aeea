package jobs

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// companyShares bounds how many delivery attempts of one company, in one
// environment, run at once in this process, so that a company whose
// receivers are slow or failing holds at most its share of the delivery
// workers and the others' deliveries keep their latency. An attempt over
// the share is snoozed (River runs it again later, without counting an
// attempt) for about as long as the company's attempts take, and a backlog
// spread over the time its places take to deliver it (backlogSnooze), so
// that a slow company's backlog waits without churning through the queue.
//
// A company whose attempts are fast may go past its share, up to burst
// places (half the workers), while its attempts take less than fastAttempt
// (its moving average) and its oldest running attempt is younger than
// that: fast receivers free their workers within milliseconds, so a single
// busy tenant is not held to a tenth of the workers. The places past the
// shares are one pool (burst less a share) for every company: the others
// keep at least half of the workers whoever bursts, where two fast
// companies bursting at once took all of them. Once an attempt of the
// company has run longer, it is held to its share again, until its
// attempts are fast again.
//
// An attempt of a fast company that finds every place taken waits for one
// in the worker (up to burst of them, each at most fastAttempt) rather than
// snoozing: River starts a fetched batch at once, and a snooze costs a
// round through the queue and at least minShareSnooze of latency, where a
// fast company's place frees within milliseconds. A waiter snoozes once
// its company turns slow, or once it has waited fastAttempt in all.
//
// The bound is per process: n instances give a company n shares of n
// times the workers, the same fraction of the whole.
type companyShares struct {
	limit  int
	burst  int
	jitter bool
	mu     sync.Mutex
	byKey  map[string]*companyShare
	// slowCap bounds the places held by the companies whose attempts are
	// slow, all together, in each environment (half the workers), and
	// active lists each environment's companies holding places, by which
	// they are counted (slowHeld). Held to their shares alone, ten
	// companies whose receivers hang held every worker, their attempts
	// taken again as each timed out, and every other company's events
	// waited an attempt's timeout (an audit).
	slowCap int
	active  map[string]map[*companyShare]struct{}
	// extra counts the places taken past their company's share, by every
	// company, in each environment (the part of a key after its last
	// '/'): at most burst - limit. Each environment has its own workers,
	// so its own pool: one shared, a sandbox company's burst held every
	// production company to its share.
	extra map[string]int
}

type companyShare struct {
	running int
	started []time.Time   // of the running attempts, oldest first
	typical time.Duration // a moving average of the company's attempts
	waiting int           // attempts waiting for a place
	freed   chan struct{} // closed when a place is given back; nil if none waits
	// booked is when the last of its snoozed attempts comes back
	// (backlogSnooze).
	booked time.Time
}

// fastAttempt is how long an attempt may run before its company is held to
// its share.
const fastAttempt = 250 * time.Millisecond

// Snoozes stay between these bounds: soon enough for a company with a
// burst of fast deliveries, seldom enough for one with slow receivers.
// One attempt's snooze is at most maxShareSnooze; a backlog's are spread
// up to maxBacklogSnooze (backlogSnooze).
const (
	minShareSnooze   = time.Second
	maxShareSnooze   = 10 * time.Second
	maxBacklogSnooze = 5 * time.Minute
)

// maxRemembered bounds the companies whose typical attempt is remembered;
// past it the idle ones are forgotten.
const maxRemembered = 10_000

func newCompanyShares(limit, workers int, jitter bool) *companyShares {
	return &companyShares{limit: limit, burst: max(limit, workers/2), jitter: jitter, byKey: map[string]*companyShare{}, extra: map[string]int{},
		slowCap: max(1, workers/2), active: map[string]map[*companyShare]struct{}{}}
}

// await takes one of key's places, waiting for one while its company's
// attempts are fast, and returns when it took it (release wants that
// instant back). When none came it returns false and how long to snooze.
func (c *companyShares) await(ctx context.Context, key string) (time.Time, bool, time.Duration) {
	// A waiter may lose the freed place to a newcomer time and again; past
	// fastAttempt in all it snoozes, so none waits on indefinitely.
	deadline := time.Now().Add(fastAttempt)
	for {
		now := time.Now()
		ok, wait, freed := c.take(key, now, now.Before(deadline))
		if ok || freed == nil {
			return now, ok, wait
		}
		t := time.NewTimer(deadline.Sub(now))
		select {
		case <-freed:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		c.mu.Lock()
		if s := c.byKey[key]; s != nil {
			s.waiting--
		}
		c.mu.Unlock()
		if ctx.Err() != nil {
			return time.Time{}, false, wait
		}
	}
}

// take takes one of key's places at now. When they are all taken it
// returns false and how long to snooze, and, if mayWait and the company's
// attempts are fast, a channel closed when a place is given back (the
// caller is then counted as waiting until it takes the lock again).
func (c *companyShares) take(key string, now time.Time, mayWait bool) (bool, time.Duration, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.byKey[key]
	if s == nil {
		if len(c.byKey) >= maxRemembered {
			c.forgetIdle()
		}
		s = &companyShare{}
		c.byKey[key] = s
	}
	// A slow company takes no place past its share, nor past the slow
	// companies' half of the workers (slowCap).
	fast := s.fastAt(now)
	env := environmentOf(key)
	if s.running >= c.limit && (!fast || s.running >= c.burst || c.extra[env] >= c.burst-c.limit) ||
		!fast && c.slowHeld(env, now) >= c.slowCap {
		wait := min(max(s.typical, minShareSnooze), maxShareSnooze)
		if !mayWait || !fast || s.waiting >= c.burst {
			wait = c.backlogSnooze(s, now, wait)
			if c.jitter {
				wait += rand.N(wait / 4)
			}
			return false, wait, nil
		}
		if c.jitter {
			wait += rand.N(wait / 4)
		}
		if s.freed == nil {
			s.freed = make(chan struct{})
		}
		s.waiting++
		return false, wait, s.freed
	}
	if s.running >= c.limit {
		c.extra[env]++
	}
	if s.running == 0 {
		if c.active[env] == nil {
			c.active[env] = map[*companyShare]struct{}{}
		}
		c.active[env][s] = struct{}{}
	}
	s.running++
	s.started = append(s.started, now)
	return true, 0, nil
}

// fastAt tells whether s's attempts are fast at now: quick on average, and
// none running has outlasted fastAttempt. Its oldest running attempt alone
// would call a company whose attempts hang fast again whenever they have
// all ended, and let its next batch take half the workers until they hung
// too.
func (s *companyShare) fastAt(now time.Time) bool {
	return s.typical < fastAttempt && (len(s.started) == 0 || now.Sub(s.started[0]) < fastAttempt)
}

// slowHeld counts the places env's slow companies hold at now (at most the
// workers, so the walk is short).
func (c *companyShares) slowHeld(env string, now time.Time) int {
	n := 0
	for s := range c.active[env] {
		if !s.fastAt(now) {
			n += s.running
		}
	}
	return n
}

// slow tells whether key's company's attempts are slow: such an attempt
// finding no slot free is deferred at once, not held in its worker
// waiting for one.
func (c *companyShares) slow(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.byKey[key]
	return s != nil && !s.fastAt(time.Now())
}

// forgetIdle forgets the idle companies whose attempts are fast, which
// forgotten are what they were (fast); the slow ones too when that frees
// less than a tenth of the memory. Forgetting every idle one, a company whose
// receivers hang was taken for fast once 10,000 others had delivered, and
// its next backlog took half the workers, each place for its attempts'
// 15 s (an audit).
func (c *companyShares) forgetIdle() {
	for k, s := range c.byKey {
		if s.running == 0 && s.waiting == 0 && s.typical < fastAttempt {
			delete(c.byKey, k)
		}
	}
	if len(c.byKey) < maxRemembered*9/10 {
		// A tenth or more freed: the walk is paid for by the companies it
		// makes room for. Freeing fewer (most remembered companies slow),
		// every new company's first attempt would walk the whole map.
		return
	}
	for k, s := range c.byKey {
		if s.running == 0 && s.waiting == 0 {
			delete(c.byKey, k)
		}
	}
}

// environmentOf is the environment of a key ("company/environment").
func environmentOf(key string) string { return key[strings.LastIndexByte(key, '/')+1:] }

// backlogSnooze is how long an attempt of s, over its places at now,
// snoozes: the first about one attempt's time (first), each next one
// deferred meanwhile a place's share of an attempt later (typical ÷ limit),
// up to maxBacklogSnooze. A company's backlog then comes back through the
// queue about as fast as its places deliver it, where every attempt of it
// came back within first: 10,000 deferred attempts of a company whose
// receivers hang went round River every 10 s, a thousand snoozes a second
// written to the database every other company's requests write to.
func (c *companyShares) backlogSnooze(s *companyShare, now time.Time, first time.Duration) time.Duration {
	if start := now.Add(first); s.booked.Before(start) {
		s.booked = start
	} else {
		s.booked = s.booked.Add(max(s.typical/time.Duration(c.limit), time.Millisecond))
	}
	return min(s.booked.Sub(now), maxBacklogSnooze)
}

// pastShare tells whether key's company holds at least its share of
// places.
func (c *companyShares) pastShare(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.byKey[key]
	return s != nil && s.running >= c.limit
}

// release gives key's place, taken at started, back after an attempt that
// took d.
func (c *companyShares) release(key string, started time.Time, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.byKey[key]
	if s == nil {
		return
	}
	if s.running--; s.running >= c.limit {
		c.extra[environmentOf(key)]--
	}
	if s.running == 0 {
		delete(c.active[environmentOf(key)], s)
	}
	if s.freed != nil {
		close(s.freed)
		s.freed = nil
	}
	for i, t := range s.started {
		if t.Equal(started) {
			s.started = append(s.started[:i], s.started[i+1:]...)
			break
		}
	}
	if s.typical == 0 {
		s.typical = d
	} else {
		s.typical = (3*s.typical + d) / 4
	}
}
