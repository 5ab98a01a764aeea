package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
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

// attemptGroup gathers the records waiting for a transaction. A few
// waiters at a time lead (maxAttemptWriters): each writes a batch, then
// hands its lead to the oldest record still pending that has none, so no
// worker writes others' batches for long.
type attemptGroup struct {
	mu      sync.Mutex
	pending []*pendingAttempt
	leaders int
}

type pendingAttempt struct {
	rec  *parcela.AttemptRecord
	done chan error    // the record's transaction ended
	lead chan struct{} // the record's worker leads now
	led  bool          // lead was sent
}

// maxAttemptWriters is how many batches are written at once: one on
// SQLite, whose single writer takes them in turn anyway; a few on
// PostgreSQL, where a batch spends most of its time in round trips.
func (db *DB) maxAttemptWriters() int {
	if db.dialect == Postgres {
		return 4
	}
	return 1
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
	if g.leaders < db.maxAttemptWriters() {
		g.leaders++
		p.led = true
		p.lead <- struct{}{}
	}
	g.mu.Unlock()
	for {
		select {
		case err := <-p.done:
			db.passLead(p)
			return failed("record delivery attempt", err)
		case <-p.lead:
			db.writeAttempts()
		case <-ctx.Done():
			// Leave the queue, then pass on a lead handed over meanwhile.
			g.mu.Lock()
			for i, q := range g.pending {
				if q == p {
					g.pending = append(g.pending[:i:i], g.pending[i+1:]...)
					break
				}
			}
			g.mu.Unlock()
			db.passLead(p)
			// The record may still commit; the job then runs again and
			// finds its delivery settled, or sends it again (at least once).
			return failed("record delivery attempt", ctx.Err())
		}
	}
}

// passLead uses a lead p was sent but did not take before leaving the
// queue (another leader wrote its record first). No lead reaches p once it
// is out of the queue, so the check cannot miss one.
func (db *DB) passLead(p *pendingAttempt) {
	select {
	case <-p.lead:
		db.writeAttempts()
	default:
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
	defer g.mu.Unlock()
	for _, q := range g.pending {
		if !q.led {
			q.led = true
			q.lead <- struct{}{}
			return
		}
	}
	g.leaders--
	if len(g.pending) == 0 {
		g.pending = nil
	}
}

// writeAttemptBatch writes records in one transaction.
func (db *DB) writeAttemptBatch(ctx context.Context, batch []*pendingAttempt) error {
	return db.inTx(ctx, func(tx *Tx) error { return db.writeAttemptsIn(ctx, tx, batch) })
}

// writeAttemptsIn writes records in tx. Their webhooks are moved on in
// the order of their ids (each webhook's attempts in their own order): on
// PostgreSQL up to four batches are written at once, and two that locked
// the rows of two failing webhooks in opposite orders deadlocked, one
// rolled back after a second's wait and written again.
func (db *DB) writeAttemptsIn(ctx context.Context, tx *Tx, batch []*pendingAttempt) error {
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
	recs := make([]*parcela.AttemptRecord, len(batch))
	for i, p := range batch {
		recs[i] = p.rec
	}
	moved, err := moveDeliveries(ctx, tx, recs)
	if err != nil {
		return err
	}
	var w attemptWrites
	byWebhook := slices.Clone(recs)
	slices.SortStableFunc(byWebhook, func(a, b *parcela.AttemptRecord) int { return strings.Compare(a.WebhookID, b.WebhookID) })
	for _, r := range byWebhook {
		if moved[r] == 0 {
			// Superseded by a manual retry, or recorded by another run of
			// its job: the delivery does not move.
			if err := keepSuperseded(ctx, tx, r, &w); err != nil {
				return err
			}
			continue
		}
		if err := recordAttempt(ctx, tx, r, moved[r], &w); err != nil {
			return err
		}
	}
	return insertAttempts(ctx, tx, &w)
}

// keepSuperseded adds to w the attempt of a delivery a manual retry
// superseded while it was being sent: it went out, so the log shows it
// (among the generations before, as the retry keeps them), though it
// moves neither the delivery nor its webhook. One recorded by another run
// of its job (same generation) is already in the log. Dropped, a
// receiver's log showed a request the delivery's did not.
func keepSuperseded(ctx context.Context, tx *Tx, r *parcela.AttemptRecord, w *attemptWrites) error {
	var generation int
	err := tx.r.queryRow(ctx, `SELECT generation FROM webhook_deliveries WHERE id = ?`, r.DeliveryID).Scan(&generation)
	if errors.Is(err, sql.ErrNoRows) || err == nil && generation <= r.Generation {
		return nil
	} else if err != nil {
		return err
	}
	w.add(r)
	return nil
}

// insertAttempts inserts the attempt rows of w, in as few statements as
// their parameters allow.
func insertAttempts(ctx context.Context, tx *Tx, w *attemptWrites) error {
	return tx.insertMany(ctx, `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, error, response_body)`,
		`(?, ?, ?, ?, ?, ?, ?)`, 7, w.rows)
}

// moveDeliveries moves each record's delivery to its next state if the
// delivery is still at the record's generation (a manual retry supersedes
// an attempt otherwise) and has not recorded the record's attempt yet
// (another run of its job did, sending at the same time), and returns the
// records whose delivery moved, each with its delivery's attempts since
// then (its retry's job makes the next). The deliveries of distinct
// records move in one statement per maxParams of them, not one each: on
// PostgreSQL every statement is a round trip.
func moveDeliveries(ctx context.Context, tx *Tx, recs []*parcela.AttemptRecord) (map[*parcela.AttemptRecord]int, error) {
	moved := make(map[*parcela.AttemptRecord]int, len(recs))
	byID := make(map[string]*parcela.AttemptRecord, len(recs))
	for _, r := range recs {
		if byID[r.DeliveryID] != nil {
			// Two records of one delivery (a rescued job ran twice): one
			// statement would move it once, whichever it took.
			for _, r := range recs {
				m, err := moveDeliveries(ctx, tx, []*parcela.AttemptRecord{r})
				if err != nil {
					return nil, err
				}
				moved[r] = m[r]
			}
			return moved, nil
		}
		byID[r.DeliveryID] = r
	}
	const width = 6
	for len(recs) > 0 {
		n := min(len(recs), maxParams/width)
		var b strings.Builder
		// VALUES columns are column1… on both engines; the casts type
		// PostgreSQL's parameters, which would otherwise be text. column6
		// is the attempts the delivery made before the record's.
		b.WriteString(`UPDATE webhook_deliveries SET status = v.column2, attempt_count = attempt_count + 1, next_attempt_at = v.column4,
			updated_at = v.column5 FROM (VALUES `)
		args := make([]any, 0, n*width)
		for i, r := range recs[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`(?, ?, CAST(? AS INTEGER), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS INTEGER))`)
			args = append(args, r.DeliveryID, r.Status, r.Generation, msPtr(r.RetryAt), ms64(r.At), r.Number-1)
		}
		b.WriteString(`) AS v WHERE webhook_deliveries.id = v.column1 AND webhook_deliveries.generation = v.column3
			AND webhook_deliveries.attempt_count = v.column6 RETURNING webhook_deliveries.id, webhook_deliveries.attempt_count`)
		counts, err := collect(ctx, tx.r, scanAttemptCount, b.String(), args...)
		if err != nil {
			return nil, err
		}
		for _, c := range counts {
			moved[byID[c.id]] = c.attempts
		}
		recs = recs[n:]
	}
	return moved, nil
}

// attemptCount is a delivery's count of attempts, as an update left it.
type attemptCount struct {
	id       string
	attempts int
}

func scanAttemptCount(row rowScanner) (attemptCount, error) {
	var c attemptCount
	err := row.Scan(&c.id, &c.attempts)
	return c, err
}
