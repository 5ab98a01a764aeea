package sqldb

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"parcela"
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

	// probing is held by the one probe in flight: checks that find the
	// outcome stale together wait for it and read its outcome, rather
	// than each write a probe row (a load balancer's checks, or a flood
	// of them, at once).
	probing chan struct{}
}

// note records the outcome of a write transaction. Only what says something
// about the database counts: a commit, or an unavailable database; a
// refused request, a canceled one or one an operator's timeout ended
// (timedOut: a lock held elsewhere) says nothing.
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
	if err := db.sqliteFileInPlace(); err != nil {
		return &parcela.Error{Code: parcela.EUNAVAILABLE, Message: "the database file was removed or replaced while open", Cause: err}
	}
	if err, fresh := db.writes.last(); fresh {
		return failed("write", err)
	}
	select {
	case db.writes.probing <- struct{}{}:
		defer func() { <-db.writes.probing }()
	case <-ctx.Done():
		return failed("probe a write", ctx.Err())
	}
	if err, fresh := db.writes.last(); fresh {
		return failed("write", err) // the probe this check waited for
	}
	return failed("probe a write", db.inTx(ctx, func(tx *Tx) error {
		_, err := tx.r.exec(ctx, `INSERT INTO counters (name, value) VALUES ('write_probe', ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, time.Now().UnixMilli())
		return err
	}))
}

// sqliteFileInPlace tells whether the SQLite file is still at its path
// (nil on PostgreSQL). Removed or replaced (a cleanup, a restore copied
// over it by rename), the open connections keep writing to the file they
// hold, which no start reads again: every write answered 2xx from then on
// is lost, while the probe's own write got through.
func (db *DB) sqliteFileInPlace() error {
	if db.sqliteFile == nil {
		return nil
	}
	now, err := os.Stat(db.sqlitePath)
	if err != nil {
		return fmt.Errorf("the database %s: %w", db.sqlitePath, err)
	}
	if !os.SameFile(db.sqliteFile, now) {
		return fmt.Errorf("the database %s is another file than the one opened", db.sqlitePath)
	}
	return nil
}
