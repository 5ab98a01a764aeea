package sqldb

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache runs reads through statements prepared once per query, which
// SQLite otherwise re-compiles on every call; each is prepared with its
// LIMIT and OFFSET cast (castLimits), or SQLite would still. database/sql
// keeps each statement prepared per pooled connection. PostgreSQL does not
// need it: pgx already caches statements per connection.
type stmtCache struct {
	pool  *sql.DB
	stmts sync.Map // query → *sql.Stmt
}

func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := c.stmts.Load(q); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := c.pool.PrepareContext(ctx, castLimits(q))
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.stmts.LoadOrStore(q, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

func (c *stmtCache) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	s, err := c.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

func (c *stmtCache) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	s, err := c.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

func (c *stmtCache) close() {
	c.stmts.Range(func(_, s any) bool {
		s.(*sql.Stmt).Close()
		return true
	})
}
