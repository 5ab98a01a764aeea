package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"sync"
	"time"

	"parcela"
	"parcela/forwarded"
)

// RateCounter counts in fixed windows for every instance that shares it:
// the store's rate windows (sqldb.DB.AddHits).
type RateCounter interface {
	// AddHits adds n hits to bucket's window [start, end) and returns the
	// hits counted in it so far, n included.
	AddHits(ctx context.Context, bucket string, start, end time.Time, n int64) (int64, error)
}

// defaultOrdersPerHour is how many orders one client address creates from
// the offer pages in a clock hour unless Deps.OrdersPerHour says otherwise.
const defaultOrdersPerHour = 60

// orderLimits bounds the orders each client address (an IPv4 address, an
// IPv6 /64) creates from the offer pages in each clock hour of the
// injected clock. Every order charged by boleto is a boleto the seller's
// bank may bill for, and anyone can post the form: a script posting
// orders by the thousand cost the seller a fee each, and filled their
// orders with people who never paid. The count is shared through the
// store when it serves several instances, and kept in this process
// otherwise.
type orderLimits struct {
	max     int64
	env     parcela.Environment
	clock   parcela.Clock
	counter RateCounter
}

func newOrderLimits(perHour int, env parcela.Environment, clock parcela.Clock, counter RateCounter) *orderLimits {
	if perHour < 0 {
		return nil // no limit
	}
	if perHour == 0 {
		perHour = defaultOrdersPerHour
	}
	if counter == nil {
		counter = &memoryCounter{hits: map[string]int64{}}
	}
	return &orderLimits{max: int64(perHour), env: env, clock: clock, counter: counter}
}

// take counts a new order of the client at addr, or tells when its hour
// ends if it made its orders of the hour already. A counter that fails
// lets the order through: the purchase is worth more than the guard.
// give gives the place back, for a post that made no order after all: it
// found the one another post of its form made (a double click reaching
// two instances took two places for one order), or it failed.
//
// twin tells, when it refuses, that another post of the same form (key)
// was counted this hour, on any instance: a double click at the hour's
// last place, whose other post may be making the order the payer asked
// for (purchase then waits for it rather than refuse).
func (l *orderLimits) take(ctx context.Context, addr netip.Addr, key string) (until time.Time, ok, twin bool, give func(context.Context), err error) {
	if l == nil {
		return time.Time{}, true, false, func(context.Context) {}, nil
	}
	now := l.clock.Now()
	start := now.Truncate(time.Hour)
	end := start.Add(time.Hour)
	sum := sha256.Sum256([]byte(forwarded.Network(addr).String()))
	bucket := "pages:orders:" + string(l.env) + ":" + hex.EncodeToString(sum[:12]) // the address is not stored
	form := sha256.Sum256([]byte(key))
	posts, err := l.counter.AddHits(ctx, "pages:form:"+string(l.env)+":"+hex.EncodeToString(form[:12]), start, end, 1)
	if err != nil {
		return time.Time{}, true, false, func(context.Context) {}, err
	}
	hits, err := l.counter.AddHits(ctx, bucket, start, end, 1)
	if err != nil {
		return time.Time{}, true, false, func(context.Context) {}, err
	}
	give = func(ctx context.Context) {
		_, _ = l.counter.AddHits(context.WithoutCancel(ctx), bucket, start, end, -1) // a place kept costs the payer one order of the hour
	}
	return end, hits <= l.max, posts > 1, give, nil
}

// memoryCounter is a RateCounter of one process: the current window's
// counts, the older ones dropped.
type memoryCounter struct {
	mu    sync.Mutex
	start time.Time
	hits  map[string]int64
}

func (c *memoryCounter) AddHits(_ context.Context, bucket string, start, _ time.Time, n int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if start.After(c.start) {
		c.start = start
		clear(c.hits)
	} else if start.Before(c.start) {
		return n, nil // a window already over
	}
	c.hits[bucket] += n
	return c.hits[bucket], nil
}
