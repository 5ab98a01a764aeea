package jobs

import (
	"testing"
	"time"
)

func TestCompanyShares(t *testing.T) {
	t.Parallel()
	c := newCompanyShares(2, 4, false) // half of 4 workers: no burst past the share
	now := time.Now()
	for range 2 {
		if ok, _ := c.acquire("a/sandbox", now); !ok {
			t.Fatal("refused within the share")
		}
	}
	ok, wait := c.acquire("a/sandbox", now)
	if ok || wait != minShareSnooze {
		t.Fatalf("over the share: %v, snooze %v", ok, wait)
	}
	if ok, _ := c.acquire("b/sandbox", now); !ok {
		t.Fatal("another company waits for the first")
	}
	if ok, _ := c.acquire("a/production", now); !ok {
		t.Fatal("the other environment waits")
	}
	// The snooze follows the company's attempts, within bounds.
	c.release("a/sandbox", now, 14*time.Second)
	if ok, _ := c.acquire("a/sandbox", now); !ok {
		t.Fatal("a released place was not given back")
	}
	if _, wait := c.acquire("a/sandbox", now); wait != maxShareSnooze {
		t.Fatalf("snooze %v after 14 s attempts", wait)
	}
	c.release("a/sandbox", now, 2*time.Second)
	c.release("a/sandbox", now, 2*time.Second)
	// b's place, held a minute, would count among the slow companies'
	// (slowCap), which this part does not measure.
	c.release("b/sandbox", now, 10*time.Millisecond)
	later := now.Add(time.Minute) // the snoozes booked above have come back
	for range 2 {
		c.acquire("a/sandbox", later)
	}
	if _, wait := c.acquire("a/sandbox", later); wait <= minShareSnooze || wait >= maxShareSnooze {
		t.Fatalf("snooze %v after attempts of 14, 2 and 2 s", wait)
	}
	// With jitter the snooze is up to a quarter longer.
	j := newCompanyShares(1, 2, true)
	j.acquire("a/sandbox", time.Now())
	if _, wait := j.acquire("a/sandbox", time.Now()); wait < minShareSnooze || wait > minShareSnooze*5/4 {
		t.Fatalf("jittered snooze %v", wait)
	}
}

// A company whose attempts are fast may use up to half the workers; once
// one of its attempts has run past fastAttempt it is held to its share.
func TestCompanySharesBurstWhileFast(t *testing.T) {
	t.Parallel()
	c := newCompanyShares(2, 10, false) // share 2, burst 5
	now := time.Now()
	for i := range 5 {
		if ok, _ := c.acquire("a/sandbox", now.Add(time.Duration(i)*time.Millisecond)); !ok {
			t.Fatalf("fast company refused at %d running", i)
		}
	}
	if ok, _ := c.acquire("a/sandbox", now.Add(10*time.Millisecond)); ok {
		t.Fatal("fast company went past half the workers")
	}
	// Its oldest attempt is now slow: past the share, nothing more.
	c.release("a/sandbox", now.Add(4*time.Millisecond), time.Millisecond)
	if ok, _ := c.acquire("a/sandbox", now.Add(fastAttempt+time.Millisecond)); ok {
		t.Fatal("a company with a slow attempt went past its share")
	}
	// When the slow attempt ends and the rest are young again, it may burst.
	c.release("a/sandbox", now, 300*time.Millisecond)
	for _, d := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond} {
		c.release("a/sandbox", now.Add(d), time.Millisecond)
	}
	later := now.Add(time.Second)
	for i := range 5 {
		if ok, _ := c.acquire("a/sandbox", later); !ok {
			t.Fatalf("refused at %d running after the slow attempt ended", i)
		}
	}
}

// A fast company over its places waits for one in the worker instead of
// snoozing; a slow one snoozes at once.
func TestCompanySharesAwait(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := newCompanyShares(1, 2, false) // share 1, burst 1
	start := time.Now()
	began, ok, _ := c.await(ctx, "a/sandbox")
	if !ok {
		t.Fatal("refused within the share")
	}
	got := make(chan bool)
	go func() {
		_, ok, _ := c.await(ctx, "a/sandbox")
		got <- ok
	}()
	// The waiter is counted before the place is given back.
	for {
		c.mu.Lock()
		w := c.byKey["a/sandbox"].waiting
		c.mu.Unlock()
		if w == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c.release("a/sandbox", began, time.Millisecond)
	if !<-got {
		t.Fatal("a fast company's waiter did not get the place given back")
	}
	c.mu.Lock()
	if s := c.byKey["a/sandbox"]; s.running != 1 || len(s.started) != 1 || s.waiting != 0 {
		t.Errorf("after the hand-over: %d running, %d started, %d waiting", s.running, len(s.started), s.waiting)
	}
	c.mu.Unlock()
	// A company whose attempts take long does not wait.
	s := newCompanyShares(1, 2, false)
	s.acquire("b/sandbox", start)
	s.release("b/sandbox", start, time.Second)
	s.acquire("b/sandbox", time.Now())
	if _, ok, wait := s.await(ctx, "b/sandbox"); ok || wait != time.Second {
		t.Fatalf("a slow company: %v, snooze %v", ok, wait)
	}
}

// acquire takes one of key's places at now, never waiting. When they are
// all taken it returns false and how long to snooze.
func (c *companyShares) acquire(key string, now time.Time) (bool, time.Duration) {
	ok, wait, _ := c.take(key, now, false)
	return ok, wait
}

// A company whose attempts have been slow (a receiver that hangs until the
// timeout) is held to its share even when none of its attempts is running:
// its next attempts are no faster for having just begun. Two such
// companies bursting to half the workers each took them all, and every
// other company's deliveries waited for a slot and were deferred.
func TestCompanySharesNoBurstAfterSlowAttempts(t *testing.T) {
	t.Parallel()
	c := newCompanyShares(10, 100, false) // share 10, burst 50
	now := time.Now()
	for _, hanging := range []string{"a/production", "b/production"} {
		// Its last attempts ran to the sender's timeout and ended.
		for range 10 {
			if ok, _ := c.acquire(hanging, now); !ok {
				t.Fatalf("%s refused within its share", hanging)
			}
		}
		for range 10 {
			c.release(hanging, now, 15*time.Second)
		}
		// A new backlog arrives at once (River starts a fetched batch
		// together): it takes its share, not half the workers.
		later := now.Add(15 * time.Second)
		taken := 0
		for range 50 {
			if ok, _ := c.acquire(hanging, later); ok {
				taken++
			}
		}
		if taken != 10 {
			t.Errorf("%s, whose attempts take 15 s, took %d places at once; its share is 10", hanging, taken)
		}
	}
	if ok, _ := c.acquire("c/production", now.Add(15*time.Second)); !ok {
		t.Fatal("another company refused")
	}
}

// The attempts a slow company has deferred come back spread over the time
// its places take to deliver them (an attempt's time ÷ its share each),
// up to maxBacklogSnooze, where all of them came back within 10 s: 10,000
// deferred attempts of a company whose receivers hang went round River
// every 10 s, a thousand snoozes a second written to the database.
func TestCompanySharesSpreadABacklog(t *testing.T) {
	t.Parallel()
	c := newCompanyShares(2, 100, false)
	now := time.Now()
	for range 2 {
		c.acquire("slow/production", now)
	}
	for range 2 {
		c.release("slow/production", now, 14*time.Second)
	}
	for range 2 {
		c.acquire("slow/production", now)
	}
	var waits []time.Duration
	for range 100 {
		_, wait := c.acquire("slow/production", now)
		waits = append(waits, wait)
	}
	// The first about an attempt's time (within maxShareSnooze), each next
	// one 7 s (14 s over 2 places) later, none past maxBacklogSnooze.
	if waits[0] != maxShareSnooze || waits[1] != maxShareSnooze+7*time.Second || waits[2] != maxShareSnooze+14*time.Second {
		t.Fatalf("snoozes %v", waits[:3])
	}
	if last := waits[len(waits)-1]; last != maxBacklogSnooze {
		t.Fatalf("the 100th snooze %v, want the bound %v", last, maxBacklogSnooze)
	}
	// Once the backlog has come back, a deferral is one attempt's time again.
	if _, wait := c.acquire("slow/production", now.Add(time.Hour)); wait != maxShareSnooze {
		t.Fatalf("snooze after the backlog: %v", wait)
	}
	// Another slow company's snoozes are its own.
	for range 2 {
		c.acquire("other/production", now)
	}
	for range 2 {
		c.release("other/production", now, 2*time.Second)
	}
	for range 2 {
		c.acquire("other/production", now)
	}
	if _, wait := c.acquire("other/production", now); wait != 2*time.Second {
		t.Fatalf("another company's first snooze %v", wait)
	}
}

// The places past the shares are one pool of half the workers, whoever
// bursts into them: two fast companies bursting to half the workers each
// took all of them, and when their receivers began to hang together (on
// one host, one provider's outage) every slot hung with them for the
// sender's timeout, and every other company's deliveries were deferred.
func TestCompanySharesBurstIntoOnePool(t *testing.T) {
	t.Parallel()
	c := newCompanyShares(10, 100, false) // share 10, burst 50
	now := time.Now()
	taken := map[string]int{}
	for _, fast := range []string{"a/production", "b/production"} {
		for range 50 {
			if ok, _ := c.acquire(fast, now); ok {
				taken[fast]++
			}
		}
	}
	if taken["a/production"] != 50 {
		t.Fatalf("a fast company alone took %d places, want its burst of 50", taken["a/production"])
	}
	if taken["b/production"] != 10 {
		t.Fatalf("a second fast company took %d places with the burst taken, want its share of 10", taken["b/production"])
	}
	// Once the first gives its extra places back, the second may burst.
	for range 40 {
		c.release("a/production", now, time.Millisecond)
	}
	for range 40 {
		if ok, _ := c.acquire("b/production", now); !ok {
			t.Fatal("the burst given back was not taken again")
		}
	}
	if ok, _ := c.acquire("b/production", now); ok {
		t.Fatal("a company went past half the workers")
	}
	if ok, _ := c.acquire("c/production", now); !ok {
		t.Fatal("another company refused its share")
	}
}

// Each environment has its own delivery workers, so its own pool of places
// past the shares: a sandbox company bursting (its receiver a developer's
// fast local server) took the one pool of both, and no production company
// could burst past its share meanwhile.
func TestCompanySharesPoolPerEnvironment(t *testing.T) {
	t.Parallel()
	c := newCompanyShares(10, 100, false) // share 10, burst 50, each environment's
	now := time.Now()
	for range 50 {
		if ok, _ := c.acquire("a/sandbox", now); !ok {
			t.Fatal("a fast sandbox company refused its burst")
		}
	}
	for i := range 50 {
		if ok, _ := c.acquire("b/production", now); !ok {
			t.Fatalf("a fast production company held to %d places by a sandbox company's burst", i)
		}
	}
	for range 50 {
		c.release("a/sandbox", now, time.Millisecond)
	}
	for range 50 {
		c.release("b/production", now, time.Millisecond)
	}
	if c.extra["sandbox"] != 0 || c.extra["production"] != 0 {
		t.Fatalf("places past the shares left counted: %v", c.extra)
	}
}
