package jobs

import (
	"fmt"
	"testing"
	"time"
)

// A company whose receivers hang is held to its share once its attempts
// are known to take 15 s, and is not forgotten because many other
// companies delivered meanwhile: forgotten, it was "fast" again, and its
// next backlog took the whole burst (half the workers), each place for its
// attempts' 15 s (an audit).
func TestHangingCompanyIsNotForgottenByChurn(t *testing.T) {
	c := newCompanyShares(10, 100, false) // share 10, burst 50
	now := time.Now()
	const hanging = "hang/production"
	for range 10 {
		if ok, _ := c.acquire(hanging, now); !ok {
			t.Fatal("refused within its share")
		}
	}
	for range 10 {
		c.release(hanging, now, 15*time.Second)
	}
	// Other companies deliver once each, fast (a busy platform).
	for i := range maxRemembered {
		key := fmt.Sprintf("c%d/production", i)
		c.acquire(key, now)
		c.release(key, now, 20*time.Millisecond)
	}
	later := now.Add(time.Second)
	taken := 0
	for range 50 {
		if ok, _ := c.acquire(hanging, later); ok {
			taken++
		}
	}
	if taken != 10 {
		t.Fatalf("the company whose attempts take 15 s took %d places at once after %d other companies delivered; its share is 10", taken, maxRemembered)
	}
}

// Companies whose attempts are slow hold half the workers together, each
// within its share: ten of them held all of them (an audit).
func TestSlowCompaniesHoldHalfTheWorkersTogether(t *testing.T) {
	c := newCompanyShares(10, 100, false)
	now := time.Now()
	for i := range 10 {
		key := fmt.Sprintf("slow%d/production", i)
		c.acquire(key, now)
		c.release(key, now, 15*time.Second)
	}
	taken := 0
	for i := range 10 {
		for range 10 {
			if ok, _ := c.acquire(fmt.Sprintf("slow%d/production", i), now); ok {
				taken++
			}
		}
	}
	if taken != 50 {
		t.Fatalf("slow companies took %d places of 100", taken)
	}
	if ok, _ := c.acquire("fast/production", now); !ok {
		t.Fatal("a new company was refused beside them")
	}
	c.acquire("slow0/sandbox", now)
	c.release("slow0/sandbox", now, 15*time.Second)
	if ok, _ := c.acquire("slow0/sandbox", now); !ok {
		t.Fatal("the other environment's slow companies are counted apart")
	}
}
