package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"

	"parcela"
)

// A pipeline runs a transaction's statements whose arguments were all
// decided beforehand. On PostgreSQL they are queued and sent in one round
// trip (a pgx batch) when flushed, and their results are checked in order,
// so the first failure is the one reported, as if they had run one by one;
// a failure aborts the transaction either way. A charge's dozen statements
// cost one round trip instead of a dozen. On SQLite, in process, each
// statement runs at once.
type pipeline struct {
	r     runner // runs each statement at once (SQLite)
	tx    *Tx    // the transaction, if any (its webhook cache)
	send  func(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	batch *pgx.Batch
	steps []func(br pgx.BatchResults) error
}

func (tx *Tx) pipeline() *pipeline {
	p := &pipeline{r: tx.r, tx: tx}
	if tx.pgxTx != nil {
		p.send, p.batch = tx.pgxTx.SendBatch, &pgx.Batch{}
	}
	return p
}

// readPipeline is a pipeline of reads outside a transaction: on
// PostgreSQL one round trip on a pooled connection, each statement in its
// own snapshot, in order.
func (db *DB) readPipeline() *pipeline {
	p := &pipeline{r: db.reader}
	if db.pool != nil {
		p.send, p.batch = db.pool.SendBatch, &pgx.Batch{}
	}
	return p
}

// exec runs a statement; check, if any, judges the rows it affected.
func (p *pipeline) exec(ctx context.Context, check func(n int64) error, q string, args ...any) error {
	if p.batch == nil {
		res, err := p.r.exec(ctx, q, args...)
		if err != nil || check == nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		return check(n)
	}
	p.batch.Queue(p.r.b.bind(q), args...)
	p.steps = append(p.steps, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err != nil || check == nil {
			return err
		}
		return check(tag.RowsAffected())
	})
	return nil
}

// guarded is runner.guarded in the pipeline.
func (p *pipeline) guarded(ctx context.Context, entity, id, q string, args ...any) error {
	return p.exec(ctx, func(n int64) error {
		if n != 1 {
			return &parcela.Conflict{Entity: entity, ID: id}
		}
		return nil
	}, q, args...)
}

// queryRow runs a query of one row, which scan reads.
func (p *pipeline) queryRow(ctx context.Context, scan func(rowScanner) error, q string, args ...any) error {
	if p.batch == nil {
		return scan(p.r.queryRow(ctx, q, args...))
	}
	p.batch.Queue(p.r.b.bind(q), args...)
	p.steps = append(p.steps, func(br pgx.BatchResults) error { return scan(noRows{br.QueryRow()}) })
	return nil
}

// query runs a query of any number of rows, each of which scan reads.
func (p *pipeline) query(ctx context.Context, scan func(rowScanner) error, q string, args ...any) error {
	if p.batch == nil {
		rows, err := p.r.query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return scanEach(rows, scan)
	}
	p.batch.Queue(p.r.b.bind(q), args...)
	p.steps = append(p.steps, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		return scanEach(rows, scan)
	})
	return nil
}

// scanEach reads every row with scan: database/sql's rows and pgx's alike.
func scanEach(rows interface {
	rowScanner
	Next() bool
	Err() error
}, scan func(rowScanner) error) error {
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// flush sends what is queued and checks each result in order.
func (p *pipeline) flush(ctx context.Context) error {
	if p.batch == nil || p.batch.Len() == 0 {
		return nil
	}
	br := p.send(ctx, p.batch)
	steps := p.steps
	p.batch, p.steps = &pgx.Batch{}, nil
	for _, step := range steps {
		if err := step(br); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

// insertMany is Tx.insertMany in the pipeline.
func (p *pipeline) insertMany(ctx context.Context, head, row string, width int, args []any) error {
	return eachInsert(head, row, width, args, func(q string, args []any) error { return p.exec(ctx, nil, q, args...) })
}

// noRows reads pgx's "no rows" as database/sql's, which the store's
// callers test for (notFound).
type noRows struct{ row pgx.Row }

func (n noRows) Scan(dest ...any) error {
	err := n.row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}
