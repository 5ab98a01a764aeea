package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"modernc.org/sqlite"
)

func TestCachingConnKeepsStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sql.OpenDB(cachingConnector{dsn: "file:" + filepath.Join(t.TempDir(), "c.db"), d: cachingDriver{&sqlite.Driver{}}})
	db.SetMaxOpenConns(1)
	defer db.Close()
	// A script of several statements runs whole.
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)`); err != nil {
		t.Fatal(err)
	}
	kept := func() int {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var n int
		err = conn.Raw(func(dc any) error {
			c, ok := dc.(*cachingConn)
			if !ok {
				return fmt.Errorf("connection is a %T", dc)
			}
			c.mu.Lock()
			n = len(c.stmts)
			c.mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := kept()
	for i := 0; i < 10; i++ {
		var sum int
		if err := db.QueryRowContext(ctx, `SELECT SUM(n) FROM t WHERE n > ?`, 1).Scan(&sum); err != nil || sum != 5 {
			t.Fatalf("sum %d, %v", sum, err)
		}
	}
	if got := kept(); got != before+1 {
		t.Fatalf("ten runs of one query kept %d statements, want 1 more than %d", got, before)
	}

	// The same statement while its rows are still open is prepared apart,
	// and both result sets are right.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	const q = `SELECT n FROM t ORDER BY n`
	outer, err := tx.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for outer.Next() {
		var a int
		if err := outer.Scan(&a); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for inner.Next() {
			var b int
			if err := inner.Scan(&b); err != nil {
				t.Fatal(err)
			}
			pairs = append(pairs, fmt.Sprint(a, b))
		}
		inner.Close()
	}
	outer.Close()
	tx.Rollback()
	if len(pairs) != 9 || pairs[0] != "1 1" || pairs[8] != "3 3" {
		t.Fatalf("nested reads: %v", pairs)
	}

	// The cache is bounded, and evicted statements still give results.
	for i := 0; i < stmtCacheSize+50; i++ {
		var n int
		if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT %d + COUNT(*) FROM t`, i)).Scan(&n); err != nil || n != i+3 {
			t.Fatalf("query %d: %d, %v", i, n, err)
		}
	}
	if got := kept(); got != stmtCacheSize {
		t.Fatalf("kept %d statements, want the bound %d", got, stmtCacheSize)
	}
	var sum int
	if err := db.QueryRowContext(ctx, `SELECT SUM(n) FROM t WHERE n > ?`, 0).Scan(&sum); err != nil || sum != 6 {
		t.Fatalf("after eviction: sum %d, %v", sum, err)
	}
}

// A LIMIT or OFFSET bound as a bare positional parameter is bound through
// a CAST, in the comma form too, and nothing else of the statement changes.
func TestCastLimits(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"SELECT id FROM river_job ORDER BY id ASC\n    LIMIT ?3\n)": "SELECT id FROM river_job ORDER BY id ASC\n    LIMIT CAST(?3 AS INTEGER)\n)",
		"SELECT n FROM t LIMIT ? OFFSET ?":                          "SELECT n FROM t LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)",
		"select n from t limit ? offset ?2":                         "select n from t limit CAST(? AS INTEGER) offset CAST(?2 AS INTEGER)",
		"SELECT n FROM t LIMIT ?1, ?2":                              "SELECT n FROM t LIMIT CAST(?1 AS INTEGER), CAST(?2 AS INTEGER)",
		"SELECT n FROM t LIMIT ?5 - 1":                              "SELECT n FROM t LIMIT CAST(?5 AS INTEGER) - 1",
		"SELECT n FROM t LIMIT :max":                                "SELECT n FROM t LIMIT :max",
		"SELECT n FROM t LIMIT 10 OFFSET 5":                         "SELECT n FROM t LIMIT 10 OFFSET 5",
		"SELECT n FROM t LIMIT CAST(? AS BIGINT)":                   "SELECT n FROM t LIMIT CAST(? AS BIGINT)",
		"SELECT limits FROM t WHERE n = ?":                          "SELECT limits FROM t WHERE n = ?",
		"INSERT INTO t VALUES (?)":                                  "INSERT INTO t VALUES (?)",
	} {
		if got := castLimits(in); got != want {
			t.Errorf("castLimits(%q) = %q, want %q", in, got, want)
		}
	}
	// Through the caching connection, the rewritten statement pages as the
	// bare one would.
	ctx := context.Background()
	db := sql.OpenDB(cachingConnector{dsn: "file:" + filepath.Join(t.TempDir(), "l.db"), d: cachingDriver{&sqlite.Driver{}}})
	db.SetMaxOpenConns(1)
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3), (4), (5)`); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ limit, offset, first, count int }{{2, 0, 1, 2}, {2, 3, 4, 2}, {10, 4, 5, 1}, {3, 1, 2, 3}} {
		q, args := `SELECT n FROM t ORDER BY n LIMIT ?1 OFFSET ?2`, []any{c.limit, c.offset}
		if i%2 == 1 {
			q, args = `SELECT n FROM t ORDER BY n LIMIT ?1, ?2`, []any{c.offset, c.limit}
		}
		got := numbers(t)(db.QueryContext(ctx, q, args...))
		if len(got) != c.count || got[0] != c.first {
			t.Fatalf("LIMIT %d OFFSET %d: %v", c.limit, c.offset, got)
		}
	}
}

// numbers reads a query's rows of one integer each, failing t on an error.
func numbers(t *testing.T) func(*sql.Rows, error) []int {
	return func(rows *sql.Rows, err error) []int {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for rows.Next() {
			var n int
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		return out
	}
}
