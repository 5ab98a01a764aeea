package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"parcela"
)

// The store's SQL is portable: "?" placeholders, integer milliseconds for
// instants, text for rates and lists. A runner is the one place it meets an
// engine: it rebinds the placeholders for PostgreSQL.

// querier is what *sql.DB, *sql.Tx, *sql.Conn and the statement cache have
// in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// binder turns the portable "?" placeholders into PostgreSQL's "$n", and
// packed select lists into their engine's (unpack), once per distinct
// statement.
type binder struct {
	dialect Dialect
	cache   sync.Map // portable query → bound query
}

func (b *binder) bind(q string) string {
	s, _ := b.bindPacked(q)
	return s
}

// bound is a statement as its engine runs it, and whether its rows are
// packed (see pack).
type bound struct {
	q      string
	packed bool
}

// bindPacked is bind, which also rewrites the statement's packed select
// lists (unpack) and says whether its rows are packed: on SQLite, one JSON
// array a row.
func (b *binder) bindPacked(q string) (string, bool) {
	if b.dialect != Postgres && !strings.Contains(q, packOpen) {
		return q, false
	}
	if v, ok := b.cache.Load(q); ok {
		if s, ok := v.(bound); ok {
			return s.q, s.packed
		}
	}
	portable := q
	q, packed := unpack(q, b.dialect != Postgres)
	if b.dialect != Postgres {
		b.cache.Store(portable, bound{q, packed})
		return q, packed
	}
	var out strings.Builder
	out.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			out.WriteByte('$')
			out.WriteString(strconv.Itoa(n))
			continue
		}
		out.WriteByte(q[i])
	}
	s := out.String()
	b.cache.Store(portable, bound{s, false})
	return s, false
}

// runner runs portable SQL on a querier: the reader pool, or a transaction.
// On SQLite the reader pool's statements pass its gate (readGate); on
// PostgreSQL only its pages of rows do (newPageGate). There the reader's
// queries go to pgx's pool directly (pool): through
// database/sql and pgx's adapter to it, a bill's read and a page of bills
// cost about a sixth more of the server's CPU (the adapter converts each
// value to database/sql's types, database/sql converts it again into the
// destination, each behind its locks).
type runner struct {
	q    querier
	b    *binder
	gate *readGate     // nil: not gated
	page bool          // its statements read pages of rows (readGate)
	pool *pgxpool.Pool // non-nil: queries go to pgx (PostgreSQL's reader)
	// owner is the company and environment whose pages these are (pagesOf):
	// the gate admits only a few of one owner's pages at a time.
	owner string
}

// rowSet is a query's rows: database/sql's, or pgx's.
type rowSet interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// pgxRows are pgx's rows as a rowSet: pgx reports a failure met while
// closing through Err.
type pgxRows struct{ pgx.Rows }

func (r pgxRows) Close() error {
	r.Rows.Close()
	return r.Rows.Err()
}

// heavy is r for statements that read a page of rows.
func (r runner) heavy() runner {
	r.page = true
	return r
}

// pagesOf is r for statements that read page p of a's rows. A page that
// reads deepPageRows rows or more, those it skips and its own, or returns
// more than widePageRows, at the gate waits for a's turn (readGate.turn)
// before it queues with everyone's; a smaller one queues at once. By its
// offset alone, a first page of 1,000 rows, which reads and returns as
// many as a deep page skips, each whole, took no turn, and a few of one
// company's at once filled the gate ahead of every other company.
func (r runner) pagesOf(a parcela.Auth, p parcela.Page) runner {
	r.page = true
	if p.Offset()+p.PerPage >= deepPageRows || p.PerPage > widePageRows {
		r.owner = a.CompanyID + "/" + string(a.Environment)
	}
	return r
}

// atLeastShown is a listing's total when its page of p showed n rows:
// the count and the page are two statements, each with its own snapshot,
// so rows created between them are on the page (newest first) but not in
// the count, which is then raised to what the page shows, as a bill
// listing's is (DB.Bills). An empty page (past the end) shows nothing and
// keeps the count.
func atLeastShown(total int, p parcela.Page, n int) int {
	if n == 0 {
		return total
	}
	return max(total, p.Offset()+n)
}

// byTurns is r for statements that read pages of a's rows whose cost is
// not their offset but their filter's whole range (rows read by one index
// and sorted by another): however shallow, they wait for a's turn as deep
// pages do.
func (r runner) byTurns(a parcela.Auth) runner {
	r.page = true
	r.owner = a.CompanyID + "/" + string(a.Environment)
	return r
}

// deepPageRows is how many rows (its offset and its own) a page reads
// from which it waits for its company's turn. A page's cost grows with
// its offset and its size (SQLite: 4 to 8 ms for the first page of 100
// bills at a million, 23 ms at offset 5,000), so up to
// here a burst of one company's pages, bounded by its rate limit, holds
// the others back for milliseconds, and the company keeps the gate's full
// width: one page at a time halved its own listing's throughput on two
// cores. Beyond it, pages that may read for seconds take turns.
const deepPageRows = 1000

// widePageRows is the most rows a page returns without waiting for its
// company's turn: a page of 100 bills is the 4 to 8 ms above, and each of
// its rows is read whole (its billing, its payments), where a deep page
// only steps over the rows before it.
const widePageRows = 100

// slot is what a statement took at its gate: its weight, and its owner's
// turn.
type slot struct {
	gate *readGate
	w    int64
	turn func()
}

// release gives the slot back; the zero slot took nothing.
func (s slot) release() {
	s.gate.release(s.w)
	if s.turn != nil {
		s.turn()
	}
}

// enter takes r's weight at its gate, if it has one, after its owner's
// turn when it reads an owner's page.
func (r runner) enter(ctx context.Context) (slot, error) {
	if r.gate == nil {
		return slot{}, nil
	}
	w := r.gate.weight(r.page)
	if w == 0 {
		return slot{}, nil
	}
	var turn func()
	if r.page && r.owner != "" {
		var err error
		if turn, err = r.gate.turn(ctx, r.owner); err != nil {
			return slot{}, err
		}
	}
	if err := r.gate.acquire(ctx, w); err != nil {
		if turn != nil {
			turn()
		}
		return slot{}, err
	}
	return slot{gate: r.gate, w: w, turn: turn}, nil
}

// session enters r's gate once for several statements of one request:
// the runner it returns passes no gate, and done gives the weight back.
// Entering for each statement, a listing's count, page and payments went
// to the back of the gate's queue three times, between other requests'
// statements, so more listings were under way at once, each holding its
// rows in memory (docs/performance.md, tenth pass). The session's
// statements must all go through the runner it returns: one entering the
// gate again could wait for a weight its own session holds.
func (r runner) session(ctx context.Context) (runner, func(), error) {
	sl, err := r.enter(ctx)
	if err != nil {
		return r, nil, err
	}
	r.gate = nil
	return r, sl.release, nil
}

func (r runner) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	sl, err := r.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer sl.release()
	return r.q.ExecContext(ctx, r.b.bind(q), args...)
}

// query runs q; the caller closes the rows, and checks their Err: on
// PostgreSQL's reader (pgx) a statement's failure may first show there,
// and rows left open hold a pool connection until closed.
func (r runner) query(ctx context.Context, q string, args ...any) (*gatedRows, error) {
	sl, err := r.enter(ctx)
	if err != nil {
		return nil, err
	}
	var rows rowSet
	bq, packed := r.b.bindPacked(q)
	if r.pool != nil {
		var pr pgx.Rows
		pr, err = r.pool.Query(ctx, bq, args...)
		rows = pgxRows{pr}
	} else {
		rows, err = r.q.QueryContext(ctx, bq, args...)
	}
	if err != nil {
		sl.release()
		return nil, err
	}
	return &gatedRows{rowSet: rows, slot: sl, packed: packed}, nil
}

// queryRow runs q for its first row, which the caller scans (always: as
// with *sql.Row, the connection is held until then).
func (r runner) queryRow(ctx context.Context, q string, args ...any) gatedRow {
	rows, err := r.query(ctx, q, args...)
	return gatedRow{rows: rows, err: err}
}

type rowScanner interface{ Scan(dest ...any) error }

// collect runs a query and scans each of its rows.
func collect[T any](ctx context.Context, r runner, scan func(rowScanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanString scans a one-column row of text.
func scanString(row rowScanner) (string, error) {
	var s string
	err := row.Scan(&s)
	return s, err
}

// guarded runs a guarded write of one row of entity: matching no row is a
// *parcela.Conflict, the row having moved since the change was decided.
func (r runner) guarded(ctx context.Context, entity, id, q string, args ...any) error {
	res, err := r.exec(ctx, q, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return &parcela.Conflict{Entity: entity, ID: id}
	}
	return nil
}

// joined puts destinations before and after a scanner's own: the columns of
// a joined row's other tables.
type joined struct {
	row        rowScanner
	head, tail []any
}

func (w joined) Scan(dests ...any) error {
	all := make([]any, 0, len(w.head)+len(dests)+len(w.tail))
	return w.row.Scan(append(append(append(all, w.head...), dests...), w.tail...)...)
}

// prefixed qualifies each of a comma-separated column list with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// placeholders returns "?, ?, …" for an IN list of n values (n > 0).
func placeholders(n int) string {
	return strings.Repeat("?, ", n-1) + "?"
}

// Instants are stored as milliseconds since the Unix epoch.
func ms64(t time.Time) int64 { return t.UnixMilli() }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).In(parcela.SaoPaulo) }

func msPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func fromNullMS(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMS(n.Int64)
	return &t
}

func nullString(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	s := n.String
	return &s
}

func nullInt(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	v := int(n.Int64)
	return &v
}

// Lists (payment methods, webhook events) are stored comma-separated.
func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

// rateScanner reads a rate stored as text; stored values were validated on
// the way in, so a bad one is corruption and surfaces as an error.
type rateScanner struct{ r *parcela.Rate }

func (s rateScanner) Scan(src any) error {
	var str string
	switch v := src.(type) {
	case string:
		str = v
	case []byte:
		str = string(v)
	default:
		return fmt.Errorf("a rate is stored as text, not %T", src)
	}
	r, err := parcela.ParseRate(str)
	if err != nil {
		return err
	}
	*s.r = r
	return nil
}

func rate(r *parcela.Rate) rateScanner { return rateScanner{r} }
