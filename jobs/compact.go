package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// countCompactor folds the bill count deltas into the per-day counts every
// interval, so that a listing's count reads few delta rows. It is a plain
// loop rather than a periodic job: once a second as a River job would leave
// 86,400 finished job rows a day behind it. Every replica may run it; the
// store makes concurrent compactions safe.
type countCompactor struct {
	upkeep Upkeep
	log    *slog.Logger
	every  time.Duration
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func (c *countCompactor) start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.done.Add(1)
	go func() {
		defer c.done.Done()
		t := time.NewTicker(c.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := c.upkeep.CompactBillCounts(ctx); err != nil && ctx.Err() == nil {
				c.log.Error("compact bill counts", "error", err.Error())
			}
		}
	}()
}

func (c *countCompactor) stop() {
	if c.cancel != nil {
		c.cancel()
		c.done.Wait()
	}
}
