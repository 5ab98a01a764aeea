package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"parcela/jobs"
	"parcela/sqldb"
)

// The saturated webhook run holds the deliveries while it charges, so its
// drain starts with the whole backlog and measures the delivery side alone.
// It pauses the server's delivery queue with River's own queue pause, from
// an insert-only River client of the harness's over the server's database:
// the pause is a row in river_queue, which a running producer learns of by
// LISTEN/NOTIFY on PostgreSQL (within milliseconds) and by polling that row
// every 2 s on SQLite (River's poll-only mode). Jobs already fetched still
// run, so the harness checks that the pause took effect (awaitPaused) before
// it charges.

// queueHold pauses and resumes the delivery queues (both environments')
// of a running server.
type queueHold struct {
	queue         string // for messages
	pause, resume func(context.Context) error
	paused        func(context.Context) (bool, error)
	close         func()
}

// openQueueHold opens its own connections to the server's database dsn
// ("sqlite:PATH" or a postgres:// URL) for the delivery queue.
func openQueueHold(ctx context.Context, dsn string) (*queueHold, error) {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		// One plain connection: sqldb.Open would also start a checkpointer
		// of its own on the server's file. The bench seeds through the
		// store in this process too.
		sqldb.PrepareSQLite()
		db, err := sql.Open("sqlite", "file:"+url.PathEscape(path)+"?_pragma=busy_timeout(10000)&_txlock=immediate")
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		c, err := river.NewClient(riversqlite.New(db), &river.Config{})
		if err != nil {
			db.Close()
			return nil, err
		}
		return holdOf(c, func() { db.Close() }), nil
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		pool.Close()
		return nil, err
	}
	return holdOf(c, pool.Close), nil
}

func holdOf[TTx any](c *river.Client[TTx], close func()) *queueHold {
	qs := jobs.DeliveryQueues(jobs.DeliveryQueue) // the queues `parcela serve` delivers on
	each := func(ctx context.Context, f func(context.Context, string, *river.QueuePauseOpts) error) error {
		for _, q := range qs {
			if err := f(ctx, q, nil); err != nil {
				return err
			}
		}
		return nil
	}
	return &queueHold{
		queue:  strings.Join(qs, ", "),
		pause:  func(ctx context.Context) error { return each(ctx, c.QueuePause) },
		resume: func(ctx context.Context) error { return each(ctx, c.QueueResume) },
		paused: func(ctx context.Context) (bool, error) {
			for _, q := range qs {
				row, err := c.QueueGet(ctx, q)
				if err != nil || row.PausedAt == nil {
					return false, err
				}
			}
			return true, nil
		},
		close: close,
	}
}

// quietWindow is how long a probe's deliveries may take to arrive before
// the queue counts as paused: five of the server's 200 ms fetch polls on
// SQLite (PostgreSQL fetches on the insert's notification).
const quietWindow = time.Second

// pauseDeliveries pauses the delivery queue and returns once no delivery
// goes out: it charges once (probe) and waits quietWindow; while that
// charge's deliveries still arrive, the producer has not seen the pause yet
// (up to River's 2 s poll on SQLite). The probes' deliveries that were held
// come out in the drain, so the run counts events created from since on.
func (h *queueHold) pauseDeliveries(ctx context.Context, rec *receiver, w *worker, charge op) (since time.Time, probes int, err error) {
	since = time.Now()
	if err := h.pause(ctx); err != nil {
		return since, 0, fmt.Errorf("pause River queue %q: %w", h.queue, err)
	}
	if p, err := h.paused(ctx); err != nil || !p {
		return since, 0, fmt.Errorf("queue %q not paused after River's QueuePause (%v)", h.queue, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		t := time.Now()
		if _, err := charge(ctx, w); err != nil {
			return since, probes, fmt.Errorf("probe charge: %w", err)
		}
		probes++
		select {
		case <-ctx.Done():
			return since, probes, ctx.Err()
		case <-time.After(quietWindow):
		}
		if len(rec.since(t)) == 0 {
			return since, probes, nil
		}
	}
	return since, probes, errors.New("deliveries still went out 30 s after River's queue pause")
}
