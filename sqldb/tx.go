package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"parcela"
)

// Enqueuer inserts the jobs that deliver a transaction's new deliveries,
// and that void the payments it canceled at their provider, inside that
// transaction, so a job exists if and only if its cause committed. The
// jobs package implements it over River.
type Enqueuer interface {
	EnqueueDeliveries(ctx context.Context, tx *Tx, jobs []DeliveryJob) error
	// EnqueueVoids inserts one job per payment to void at its provider
	// (parcela.Change.Voids).
	EnqueueVoids(ctx context.Context, tx *Tx, voids []parcela.CancelRequest) error
}

// DeliveryJob asks for one attempt of a delivery at At (nil: now).
// Generation must still be the delivery's when it runs, or the job stands
// down: a manual retry superseded it. So must Attempt, the attempt of the
// generation the job makes (1 for its first): a job that runs again once
// its attempt is recorded (River retries a job whose record answered an
// error; the rescuer frees one it took for dead) stands down rather than
// send again and queue a second retry.
// Environment puts a sandbox delivery behind production's in the queue.
type DeliveryJob struct {
	DeliveryID  string
	Environment parcela.Environment
	Generation  int
	Attempt     int
	At          *time.Time
}

// Tx is one store transaction. On SQLite it wraps a *sql.Tx. On PostgreSQL
// the transaction is begun through pgx on a connection held from the pool,
// and the store's SQL runs through database/sql on that same connection, so
// River can insert jobs with the pgx.Tx in the same transaction.
type Tx struct {
	db    *DB
	r     runner
	sqlTx *sql.Tx
	conn  *sql.Conn
	pgxTx pgx.Tx
	done  bool

	jobs  []DeliveryJob
	voids []parcela.CancelRequest
	// hooks caches the subscriptions fan-out looked up in this transaction.
	hooks map[string][]subscription
}

// Begin starts a write transaction, for tools and tests; the store's own
// writes go through inTx.
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	if db.dialect == SQLite {
		t, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		return &Tx{db: db, r: runner{q: t, b: db.binder}, sqlTx: t}, nil
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	var ptx pgx.Tx
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(pgxConn)
		if !ok {
			return errors.New("postgres connection is not pgx")
		}
		var err error
		ptx, err = c.Conn().Begin(ctx)
		return err
	})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &Tx{db: db, r: runner{q: conn, b: db.binder}, conn: conn, pgxTx: ptx}, nil
}

// SQLTx is the SQLite transaction (nil on PostgreSQL), for River's driver.
func (tx *Tx) SQLTx() *sql.Tx { return tx.sqlTx }

// PgxTx is the PostgreSQL transaction (nil on SQLite), for River's driver.
func (tx *Tx) PgxTx() pgx.Tx { return tx.pgxTx }

// enqueueDelivery queues a delivery's job to be inserted with this
// transaction at commit time.
func (tx *Tx) enqueueDelivery(j DeliveryJob) { tx.jobs = append(tx.jobs, j) }

// enqueueVoids queues the jobs that void payments at their provider, to be
// inserted with this transaction at commit time.
func (tx *Tx) enqueueVoids(v []parcela.CancelRequest) { tx.voids = append(tx.voids, v...) }

// dropJobs forgets the queued jobs (a savepoint's, rolled back or done).
func (tx *Tx) dropJobs() { tx.jobs, tx.voids = nil, nil }

// Commit inserts the queued jobs and commits. Without an enqueuer (tools
// that only read or seed) queued jobs are an error, never silently dropped.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.done {
		return errors.New("transaction already finished")
	}
	if err := tx.enqueueJobs(ctx); err != nil {
		tx.Rollback()
		return err
	}
	tx.done = true
	if tx.sqlTx != nil {
		return tx.sqlTx.Commit()
	}
	defer tx.conn.Close()
	err := tx.conn.Raw(func(any) error { return tx.pgxTx.Commit(ctx) })
	if errors.Is(err, sql.ErrConnDone) {
		// A statement found the connection dropped and database/sql closed
		// it: the server ends the transaction uncommitted.
		return fmt.Errorf("commit: connection lost: %w", err)
	}
	return err
}

// enqueueJobs inserts the queued jobs in the transaction.
func (tx *Tx) enqueueJobs(ctx context.Context) error {
	if len(tx.jobs) == 0 && len(tx.voids) == 0 {
		return nil
	}
	if tx.db.enqueuer == nil {
		return errors.New("jobs queued but no job queue is configured")
	}
	if len(tx.jobs) > 0 {
		if err := tx.db.enqueuer.EnqueueDeliveries(ctx, tx, tx.jobs); err != nil {
			return fmt.Errorf("insert jobs: %w", err)
		}
	}
	if len(tx.voids) > 0 {
		if err := tx.db.enqueuer.EnqueueVoids(ctx, tx, tx.voids); err != nil {
			return fmt.Errorf("insert void jobs: %w", err)
		}
	}
	tx.dropJobs()
	return nil
}

// Rollback abandons the transaction; it is safe to call after Commit.
func (tx *Tx) Rollback() error {
	if tx.done {
		return nil
	}
	tx.done = true
	if tx.sqlTx != nil {
		return tx.sqlTx.Rollback()
	}
	defer tx.conn.Close()
	// A fresh context: rollback must run even when the request's was canceled.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Through Raw, which holds database/sql's lock on the connection: when
	// a statement found the connection dropped, database/sql has closed it
	// and handed it back to pgxpool, whose destroy runs in a goroutine; a
	// rollback sent on it then would race that close. A closed connection
	// has nothing left to roll back: the server ends the transaction.
	err := tx.conn.Raw(func(any) error { return tx.pgxTx.Rollback(ctx) })
	if errors.Is(err, sql.ErrConnDone) {
		return nil
	}
	return err
}

// maxParams bounds the bind parameters of one statement, far below
// SQLite's (32,766) and PostgreSQL's (65,535) limits.
const maxParams = 900

// insertMany runs head + " VALUES " + row, row, … with args holding
// len(args)/width rows, in as few statements as maxParams allows.
func (tx *Tx) insertMany(ctx context.Context, head, row string, width int, args []any) error {
	return eachInsert(head, row, width, args, func(q string, args []any) error {
		_, err := tx.r.exec(ctx, q, args...)
		return err
	})
}

// eachInsert splits a multi-row INSERT into statements of at most
// maxParams arguments and runs each.
func eachInsert(head, row string, width int, args []any, run func(q string, args []any) error) error {
	if width <= 0 || len(args)%width != 0 {
		return fmt.Errorf("insertMany: %d arguments are not rows of %d", len(args), width)
	}
	per := maxParams / width
	for len(args) > 0 {
		n := min(len(args)/width, per)
		var b strings.Builder
		b.Grow(len(head) + 8 + n*(len(row)+2))
		b.WriteString(head)
		b.WriteString(" VALUES ")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(row)
		}
		if err := run(b.String(), args[:n*width]); err != nil {
			return err
		}
		args = args[n*width:]
	}
	return nil
}

// txAttempts bounds how often a transaction that failed transiently
// (SQLITE_BUSY, a PostgreSQL serialization failure or deadlock) runs again.
const txAttempts = 3

// maxAborted bounds how often a transaction runs again because its group
// commit was rolled back by another's failure (group_commit.go).
const maxAborted = 8

// inTx runs fn in one transaction, committing on success, and runs it
// again when the engine failed it transiently. On SQLite the transaction
// is one savepoint of the writer's next group commit (group_commit.go).
func (db *DB) inTx(ctx context.Context, fn func(tx *Tx) error) error {
	aborted := 0
	for attempt := 1; ; attempt++ {
		var err error
		if db.group != nil {
			err = db.groupTx(ctx, fn)
		} else {
			err = db.tryTx(ctx, fn)
		}
		if errors.Is(err, errBatchAborted) && aborted < maxAborted {
			// Another transaction's failure, not this one's: run it again
			// at once, without spending an attempt.
			aborted++
			attempt--
			continue
		}
		if err == nil || classify(err) != transient || attempt == txAttempts {
			db.writes.note(ctx, err)
			return err
		}
		select {
		case <-ctx.Done():
			// The request ended before its next run: its end is the
			// answer (503 at the write timeout, 499 for a client gone),
			// not the collision (a 409 conflict once the runs are spent).
			return fmt.Errorf("%w, after %w", ctx.Err(), err)
		case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
		}
	}
}

// tryTx runs fn in one transaction. When the write completes an idempotent
// request (parcela.IdempotentAnswer), the request's response is stored in
// the same transaction, so a crash at any point leaves either both or
// neither: a retry replays the response or runs the request afresh.
func (db *DB) tryTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	committed, err := db.storeAnswer(ctx, tx)
	if err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if committed != nil {
		committed()
	}
	return nil
}

// storeAnswer stores in tx the response of the idempotent request ctx
// carries, to commit with its writes, or the claim on its key of an
// AfterCommit request (parcela.IdempotentClaim). It returns what to tell
// the request once tx has committed (nil when the request has no key).
// Another request's stored response or claim under the key is
// ErrIdempotencyKeyTaken.
func (db *DB) storeAnswer(ctx context.Context, tx *Tx) (committed func(), err error) {
	if req := parcela.IdempotentClaim(ctx); req != nil {
		token := parcela.NewID()
		claimed, err := claimKey(ctx, tx, req.Auth, req.Key, req.RequestHash, token, db.clock.Now())
		if err != nil {
			return nil, err
		}
		if !claimed {
			return nil, parcela.ErrIdempotencyKeyTaken
		}
		return func() { req.Claimed(token) }, nil
	}
	req, resp, err := parcela.IdempotentAnswer(ctx)
	if err != nil || req == nil {
		return nil, err
	}
	stored, err := storeResponse(ctx, tx, req.Auth, req.Key, *resp, db.clock.Now())
	if err != nil {
		return nil, err
	}
	if !stored {
		return nil, parcela.ErrIdempotencyKeyTaken
	}
	db.fault(ctx, BeforeCommit)
	return func() {
		req.Committed(*resp)
		db.fault(ctx, AfterCommit)
	}, nil
}

// lockRows is the clause that locks the rows a SELECT reads, FOR SHARE or
// FOR NO KEY UPDATE (mode), where the engine has one: SQLite serializes writers
// instead.
func (db *DB) lockRows(mode string) string {
	if db.dialect == Postgres {
		return " FOR " + mode
	}
	return ""
}
