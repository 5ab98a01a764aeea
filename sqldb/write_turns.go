package sqldb

import (
	"context"

	"parcela"
)

// writeTurns admits one company's transactions on PostgreSQL a few at a
// time. A transaction holds a connection of the pool, which every company's
// reads and writes share, for as long as it waits on a row lock: one
// company's charges of one offer, queued on the offer's row behind a
// transaction holding it (a cancelation releasing a seat, a PATCH counting
// the offer's sales), took every connection, and another company's read of
// its own order waited for the lock with them, up to the write timeout (an
// audit). Waiting for its turn outside the pool, one company holds at most
// half its connections. SQLite has none of this: its writes queue for its
// single writer, and its reads have connections of their own.
type writeTurns struct {
	per   int64
	turns ownerTurns
}

// newWriteTurns gives each company and environment half of a pool of
// maxConns connections for its transactions, at least one.
func newWriteTurns(maxConns int32) *writeTurns {
	return &writeTurns{per: max(1, int64(maxConns)/2)}
}

// take waits for one of a's turns, first come, first served among its
// transactions, and returns what gives it back. A nil writeTurns, or a
// transaction of no company (the sweeps' bookkeeping, the delivery log's
// batches), takes nothing.
func (w *writeTurns) take(ctx context.Context, a parcela.Auth) (func(), error) {
	if w == nil || a.CompanyID == "" {
		return func() {}, nil
	}
	return w.turns.take(ctx, a.CompanyID+"/"+string(a.Environment), w.per)
}

// inTxOf is inTx for a transaction of a's: on PostgreSQL it waits for a's
// turn first (writeTurns), unless it is a sweep's (parcela.Sweeping).
func (db *DB) inTxOf(ctx context.Context, a parcela.Auth, fn func(tx *Tx) error) error {
	if parcela.Sweeping(ctx) {
		return db.inTx(ctx, fn)
	}
	done, err := db.writeTurns.take(ctx, a)
	if err != nil {
		return err
	}
	defer done()
	return db.inTx(ctx, fn)
}
