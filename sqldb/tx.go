package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Enqueuer inserts background jobs inside a store transaction, so that a job
// exists if and only if the change that caused it committed.
type Enqueuer interface {
	InsertTx(ctx context.Context, tx *Tx, jobs []river.InsertManyParams) error
}

// querier is what *sql.Tx and *sql.Conn have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Tx is one store transaction. On SQLite it wraps a *sql.Tx. On PostgreSQL
// the transaction is begun through pgx on a connection held from the pool,
// and the application's SQL runs through database/sql on that same
// connection, so River can insert jobs with the pgx.Tx in the same
// transaction.
type Tx struct {
	db    *DB
	q     querier
	sqlTx *sql.Tx
	conn  *sql.Conn
	pgxTx pgx.Tx
	done  bool
	// Now is the time of this transaction, read once from the clock so
	// every row it writes agrees.
	Now time.Time

	jobs []river.InsertManyParams
	// hooks caches the subscriptions fan-out looked up in this transaction.
	hooks map[string][]subscription
}

// Begin starts a write transaction.
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	return db.beginAt(ctx, db.Clock.Now())
}

// beginAt starts a write transaction whose time is now, for callers that
// build their rows before beginning, at the time they will carry.
func (db *DB) beginAt(ctx context.Context, now time.Time) (*Tx, error) {
	if db.dialect == SQLite {
		t, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		return &Tx{db: db, q: t, sqlTx: t, Now: now}, nil
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
	return &Tx{db: db, q: conn, conn: conn, pgxTx: ptx, Now: now}, nil
}

// SQLTx is the SQLite transaction (nil on PostgreSQL), for River's driver.
func (tx *Tx) SQLTx() *sql.Tx { return tx.sqlTx }

// PgxTx is the PostgreSQL transaction (nil on SQLite), for River's driver.
func (tx *Tx) PgxTx() pgx.Tx { return tx.pgxTx }

// Enqueue queues a job to be inserted with this transaction at commit time.
func (tx *Tx) Enqueue(args river.JobArgs, opts *river.InsertOpts) {
	tx.jobs = append(tx.jobs, river.InsertManyParams{Args: args, InsertOpts: opts})
}

// Commit inserts the queued jobs and commits. Without an enqueuer (tools
// that only read or seed) queued jobs are an error, never silently dropped.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.done {
		return errors.New("transaction already finished")
	}
	if len(tx.jobs) > 0 {
		if tx.db.Enqueue == nil {
			tx.Rollback()
			return errors.New("jobs queued but no job queue is configured")
		}
		if err := tx.db.Enqueue.InsertTx(ctx, tx, tx.jobs); err != nil {
			tx.Rollback()
			return fmt.Errorf("insert jobs: %w", err)
		}
	}
	tx.done = true
	if tx.sqlTx != nil {
		return tx.sqlTx.Commit()
	}
	defer tx.conn.Close()
	return tx.pgxTx.Commit(ctx)
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
	return tx.pgxTx.Rollback(ctx)
}

func (tx *Tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return tx.q.ExecContext(ctx, tx.db.rebind(q), args...)
}

// maxParams bounds the bind parameters of one statement, far below
// SQLite's (32,766) and PostgreSQL's (65,535) limits.
const maxParams = 900

// insertMany runs head + " VALUES " + row, row, … with args holding
// len(args)/width rows, in as few statements as maxParams allows.
func (tx *Tx) insertMany(ctx context.Context, head, row string, width int, args []any) error {
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
		if _, err := tx.exec(ctx, b.String(), args[:n*width]...); err != nil {
			return err
		}
		args = args[n*width:]
	}
	return nil
}

func (tx *Tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return tx.q.QueryContext(ctx, tx.db.rebind(q), args...)
}

func (tx *Tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return tx.q.QueryRowContext(ctx, tx.db.rebind(q), args...)
}

// inTx runs fn in one transaction, committing on success.
func (db *DB) inTx(ctx context.Context, fn func(tx *Tx) error) error {
	return db.inTxAt(ctx, db.Clock.Now(), fn)
}

// inTxAt is inTx with the transaction's time given: the now its caller
// already used to build what fn writes.
func (db *DB) inTxAt(ctx context.Context, now time.Time, fn func(tx *Tx) error) error {
	tx, err := db.beginAt(ctx, now)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// lockRows is the clause that locks the rows a SELECT reads, FOR SHARE or
// FOR UPDATE (mode), where the engine has one: SQLite serializes writers
// instead.
func (db *DB) lockRows(mode string) string {
	if db.dialect == Postgres {
		return " FOR " + mode
	}
	return ""
}
