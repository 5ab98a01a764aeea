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
