package sqldb

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"regexp"
	"strings"
	"sync"
)

// stmtCacheSize bounds the statements one SQLite connection keeps: ours,
// River's, and the multi-row inserts, whose text varies with the row count.
const stmtCacheSize = 256

// cachingDriver wraps the SQLite driver so that every connection keeps its
// prepared statements. modernc's driver parses a statement on every call,
// and the writer, a single connection that serializes every write, runs the
// same few statements (the store's and River's) thousands of times a
// second: parsing was a third of the webhook drain's CPU.
type cachingDriver struct{ driver.Driver }

// sqliteConn is what database/sql uses of a modernc connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.SessionResetter
	driver.Validator
	driver.Pinger
}

func (d cachingDriver) Open(name string) (driver.Conn, error) {
	c, err := d.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(sqliteConn)
	if !ok {
		c.Close()
		return nil, errors.New("sqlite connection lacks a database/sql interface")
	}
	return &cachingConn{sqliteConn: sc, stmts: map[string]*cachedStmt{}, lru: list.New()}, nil
}

// cachingConn hides the driver's QueryContext and ExecContext, so that
// database/sql prepares every statement, through the cache.
type cachingConn struct {
	sqliteConn
	mu    sync.Mutex
	stmts map[string]*cachedStmt
	lru   *list.List // of *cachedStmt, most recently used first
}

// cachedStmt is lent to one user at a time; a statement asked for while
// lent (rows still open) is prepared afresh and not kept.
type cachedStmt struct {
	driver.Stmt
	conn  *cachingConn
	query string
	elem  *list.Element // nil when not kept
	lent  bool
}

func (c *cachingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.mu.Lock()
	if s, ok := c.stmts[query]; ok && !s.lent {
		s.lent = true
		c.lru.MoveToFront(s.elem)
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	st, err := c.sqliteConn.PrepareContext(ctx, castLimits(query))
	if err != nil {
		return nil, err
	}
	s := &cachedStmt{Stmt: st, conn: c, query: query, lent: true}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.stmts[query]; !ok {
		s.elem = c.lru.PushFront(s)
		c.stmts[query] = s
		for c.lru.Len() > stmtCacheSize {
			old := c.lru.Remove(c.lru.Back()).(*cachedStmt)
			delete(c.stmts, old.query)
			old.elem = nil
			if !old.lent {
				old.Stmt.Close()
			}
		}
	}
	return s, nil
}

// Close returns the statement to the cache, or closes it if it is not kept.
func (s *cachedStmt) Close() error {
	c := s.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	s.lent = false
	if s.elem == nil {
		return s.Stmt.Close()
	}
	return nil
}

func (c *cachingConn) Close() error {
	c.mu.Lock()
	for _, s := range c.stmts {
		s.elem = nil // a statement still lent closes when returned
		if !s.lent {
			s.Stmt.Close()
		}
	}
	c.stmts, c.lru = nil, list.New()
	c.mu.Unlock()
	return c.sqliteConn.Close()
}

// bareLimit is a LIMIT or OFFSET bound as a bare positional parameter
// (River's form, ?NNN), with the second of LIMIT's comma form ("LIMIT
// ?1, ?2", offset then count).
var bareLimit = regexp.MustCompile(`(?i)\b(LIMIT|OFFSET)(\s+)(\?\d*)(?:(\s*,\s*)(\?\d*))?`)

// castLimits binds a statement's LIMIT and OFFSET parameters through a
// CAST to INTEGER. SQLite reads a bare parameter's bound value when it
// plans a LIMIT or OFFSET (sqlite3ExprIsInteger), and so marks a prepared
// statement to be compiled again whenever it is bound anew: at every call.
// A CAST is not read at planning time, and of an integer it changes
// nothing else. Both of SQLite's statement caches prepare through it, the
// readers' (stmtCache) and the writer's, so the store's pages and sweeps
// and River's statements (its fetch of available jobs: every 200 ms per
// queue and every 10 ms while a queue is busy, on the single writer) are
// all compiled once; PostgreSQL, which plans no such thing, gets the SQL
// as written. It reads no SQL: "LIMIT ?" inside a string literal would be
// rewritten too, and neither the store nor River has one.
func castLimits(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	return bareLimit.ReplaceAllStringFunc(q, func(m string) string {
		p := bareLimit.FindStringSubmatch(m)
		out := p[1] + p[2] + "CAST(" + p[3] + " AS INTEGER)"
		if p[5] != "" {
			out += p[4] + "CAST(" + p[5] + " AS INTEGER)"
		}
		return out
	})
}

// cachingConnector opens cachingDriver connections to one DSN.
type cachingConnector struct {
	dsn string
	d   cachingDriver
}

func (c cachingConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c cachingConnector) Driver() driver.Driver                        { return c.d }
