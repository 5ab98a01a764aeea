package sqldb

import (
	"context"
	"sync"
	"time"

	"parcela"
)

// Attempt records are written by group commit: the delivery workers that
// finish at about the same time hand their records to one of them, which
// writes them all in one transaction while the others wait for it. Every
// worker still returns only once its own record has committed, so River
// completes a job only after its attempt is recorded; what is shared is
// the transaction's begin and commit (on SQLite, its turn at the single
// writer and its WAL frames; on PostgreSQL, a pooled connection and its
// round trips), which cost more than the attempt's own statements.

// maxAttemptBatch bounds the records of one transaction, so SQLite's
// writer is not held long.
const maxAttemptBatch = 128

// batchTimeout bounds one batch's transaction: the leader writes the
// others' records too, so its own context does not bound it.
const batchTimeout = 5 * time.Second

// attemptGroup gathers the records waiting for a transaction. One waiter
// at a time leads: it writes a batch, then hands the lead to the oldest
// record still pending, so no worker writes others' batches for long.
type attemptGroup struct {
	mu      sync.Mutex
	pending []*pendingAttempt
	leading bool
}

type pendingAttempt struct {
	rec  *parcela.AttemptRecord
	done chan error    // the record's transaction ended
	lead chan struct{} // the record's worker leads now
}

// RecordAttempt stores an attempt and moves its delivery and webhook on, in
// one transaction with the retry's job, so none is lost or doubled. It
// returns once that transaction has committed (or failed); the
// transaction may hold other workers' attempts too.
func (db *DB) RecordAttempt(ctx context.Context, r parcela.AttemptRecord) error {
	p := &pendingAttempt{rec: &r, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	g := &db.attempts
	g.mu.Lock()
	g.pending = append(g.pending, p)
	if !g.leading {
		g.leading = true
		p.lead <- struct{}{}
	}
	g.mu.Unlock()
	for {
		select {
		case err := <-p.done:
			return failed("record delivery attempt", err)
		case <-p.lead:
			db.writeAttempts()
		case <-ctx.Done():
			// Leave the queue; a lead handed over meanwhile is passed on.
			g.mu.Lock()
			for i, q := range g.pending {
				if q == p {
					g.pending = append(g.pending[:i:i], g.pending[i+1:]...)
					break
				}
			}
			g.mu.Unlock()
			select {
			case <-p.lead:
				db.writeAttempts()
			default:
			}
			// The record may still commit; the job then runs again and
			// finds its delivery settled, or sends it again (at least once).
			return failed("record delivery attempt", ctx.Err())
		}
	}
}

// writeAttempts writes one batch of the pending records and hands the lead
// on.
func (db *DB) writeAttempts() {
	g := &db.attempts
	g.mu.Lock()
	n := min(len(g.pending), maxAttemptBatch)
	batch := g.pending[:n:n]
	g.pending = g.pending[n:]
	g.mu.Unlock()
	if n > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
		err := db.writeAttemptBatch(ctx, batch)
		if err != nil && n > 1 {
			// One record the engine refuses must not fail the others'.
			for _, p := range batch {
				p.done <- db.writeAttemptBatch(ctx, []*pendingAttempt{p})
			}
		} else {
			for _, p := range batch {
				p.done <- err
			}
		}
		cancel()
	}
	g.mu.Lock()
	if len(g.pending) > 0 {
		g.pending[0].lead <- struct{}{}
	} else {
		g.leading = false
		g.pending = nil
	}
	g.mu.Unlock()
}

// writeAttemptBatch writes records in one transaction.
func (db *DB) writeAttemptBatch(ctx context.Context, batch []*pendingAttempt) error {
	return db.inTx(ctx, func(tx *Tx) error {
		// An attempt's record need not wait for its own WAL flush on
		// PostgreSQL: River's completion of the job commits after it, and
		// flushing that commit flushes this one. A crash before both loses
		// the attempt and its job's completion together, and the delivery
		// goes out again, which at-least-once allows.
		if db.dialect == Postgres {
			if _, err := tx.r.exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
				return err
			}
		}
		for _, p := range batch {
			if err := recordAttempt(ctx, tx, p.rec); err != nil {
				return err
			}
		}
		return nil
	})
}
