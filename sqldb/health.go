package sqldb

import (
	"context"
	"sync"
	"time"
)

// How long the outcome of a write (a request's, or a probe's) tells whether
// the database takes writes, before /readyz probes again: a failure is
// probed again soon, to see the database come back; a success lasts
// longer, so an idle instance polled by a load balancer writes a probe row
// at most every 10 s (each write makes SQLite's readers drop their caches).
const (
	failureFresh = 2 * time.Second
	successFresh = 10 * time.Second
)

// writeHealth remembers whether the last write transaction got through.
// Wall time, not the store's clock: it measures the process's own
// experience, and tests run on a clock that stands still.
type writeHealth struct {
	mu  sync.Mutex
	at  time.Time
	err error // nil: the last write committed
}

// note records the outcome of a write transaction. Only what says something
// about the database counts: a commit, or an unavailable database; a
// refused request or a canceled one says nothing.
func (h *writeHealth) note(ctx context.Context, err error) {
	switch {
	case err == nil:
	case ctx.Err() != nil || classify(err) != unavailable:
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.at, h.err = time.Now(), err
}

// last is the outcome of the last write, if it is fresh.
func (h *writeHealth) last() (err error, fresh bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ttl := successFresh
	if h.err != nil {
		ttl = failureFresh
	}
	return h.err, !h.at.IsZero() && time.Since(h.at) < ttl
}

// Ready tells whether the database answers and takes writes, for /readyz:
// the outcome of the last write if it is fresh, or else of a probe that
// writes one row.
func (db *DB) Ready(ctx context.Context) error {
	if err, fresh := db.writes.last(); fresh {
		return failed("write", err)
	}
	return failed("probe a write", db.inTx(ctx, func(tx *Tx) error {
		_, err := tx.r.exec(ctx, `INSERT INTO counters (name, value) VALUES ('write_probe', ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, time.Now().UnixMilli())
		return err
	}))
}
