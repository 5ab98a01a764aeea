package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
)

// TestCopyLoadsWhatInsertsLoad loads one generated chunk into PostgreSQL
// with COPY, reads every seeded column back, deletes it, loads the same
// chunk with the multi-row INSERTs, and compares: the two paths must write
// the same rows, NULLs included.
func TestCopyLoadsWhatInsertsLoad(t *testing.T) {
	admin := os.Getenv("PARCELA_TEST_POSTGRES_URL")
	if admin == "" {
		t.Skip("PARCELA_TEST_POSTGRES_URL is not set")
	}
	t.Parallel()
	ctx := context.Background()
	dsn, drop, err := postgresTarget(&config{postgres: admin}).create(ctx, "copytest", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	db, err := sqldb.Open(ctx, dsn, sqldb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	co, err := createCompany(ctx, db, 0, parcela.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	raw := db.SQLDB()
	cities, err := cityIDs(ctx, raw, db.Dialect())
	if err != nil {
		t.Fatal(err)
	}
	c, err := newGenerator([]*company{co}, cities, time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC)).chunk(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}

	load := func(w *writer) []string {
		t.Helper()
		if err := w.write(ctx, c); err != nil {
			t.Fatal(err)
		}
		var rows []string
		for ti, tb := range tables {
			got := dumpTable(t, db, tb)
			if len(got) != c.counts[ti] {
				t.Fatalf("%s: %d rows, generated %d", tb.name, len(got), c.counts[ti])
			}
			rows = append(rows, got...)
		}
		return rows
	}
	copied := load(&writer{db: raw, pool: db.PgxPool(), dialect: db.Dialect()})
	for _, tb := range slices.Backward(tables) {
		if _, err := raw.ExecContext(ctx, "DELETE FROM "+tb.name+generatedOnly(tb)); err != nil {
			t.Fatal(err)
		}
	}
	inserter := &writer{db: raw, dialect: db.Dialect(), stmts: map[int]*sql.Stmt{}}
	defer inserter.close()
	inserted := load(inserter)
	if !slices.Equal(copied, inserted) {
		for i := range min(len(copied), len(inserted)) {
			if copied[i] != inserted[i] {
				t.Fatalf("row %d differs:\ncopied   %s\ninserted %s", i, copied[i], inserted[i])
			}
		}
		t.Fatalf("%d rows copied, %d inserted", len(copied), len(inserted))
	}
	if nulls := strings.Count(strings.Join(copied, "\n"), "interface {}(nil)"); nulls == 0 {
		t.Fatal("no NULL among the rows: the comparison would not see one lost")
	}
}

// dumpTable is every row of t's seeded columns, in id order, as text.
// generatedOnly leaves out of tb the rows the generator did not write: the
// seeded companies' addresses.
func generatedOnly(tb table) string {
	if tb.name == "addresses" {
		return " WHERE id NOT IN (SELECT address_id FROM companies WHERE address_id IS NOT NULL)"
	}
	return ""
}

func dumpTable(t *testing.T, db *sqldb.DB, tb table) []string {
	t.Helper()
	rows, err := db.SQLDB().Query("SELECT " + strings.Join(tb.cols, ", ") + " FROM " + tb.name + generatedOnly(tb) + " ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	vals := make([]any, len(tb.cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, tb.name+fmt.Sprintf("%#v", vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
