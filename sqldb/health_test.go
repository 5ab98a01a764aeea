package sqldb_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A full disk and a read-only database, for real on SQLite (a page limit
// at the file's size, and query_only on the writer): writes are
// unavailable, not internal errors, and Ready says so until a write gets
// through again.
func TestWritesFailUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqldbtest.Open(t, sqldb.SQLite, sqldb.Config{})
	app := sqldbtest.Services(db, nil)
	a := parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}
	writer := db.SQLDB() // one connection: the pragmas below stay on it
	pragma := func(q string) {
		t.Helper()
		if _, err := writer.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	create := func() error {
		_, err := app.Catalog.CreateProduct(ctx, a, parcela.ProductInput{Name: new("Curso"), FullAmountCents: new(int64(1000)),
			Description: new(strings.Repeat("x", 4000))})
		return err
	}
	unavailable := func(what string, err error) {
		t.Helper()
		var e *parcela.Error
		if parcela.ErrorCode(err) != parcela.EUNAVAILABLE || !errors.As(err, &e) || e.Cause == nil || strings.Contains(e.Message, "(") {
			t.Fatalf("%s: %v is not unavailable", what, err)
		}
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("ready: %v", err)
	}

	// The disk fills up.
	var pages int
	if err := writer.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	pragma("PRAGMA max_page_count = " + strconv.Itoa(pages))
	var err error
	for range 1000 {
		if err = create(); err != nil {
			break
		}
	}
	unavailable("a write on a full disk", err)
	unavailable("ready after it", db.Ready(ctx))
	pragma("PRAGMA max_page_count = 4294967294")
	if err := create(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("ready once writes get through: %v", err)
	}

	// The file turns read-only.
	pragma("PRAGMA query_only = 1")
	unavailable("a write on a read-only database", create())
	unavailable("ready after it", db.Ready(ctx))
	pragma("PRAGMA query_only = 0")

	// With no write of its own lately, Ready probes with one.
	fresh := sqldbtest.Open(t, sqldb.SQLite, sqldb.Config{})
	if _, err := fresh.SQLDB().ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
		t.Fatal(err)
	}
	unavailable("a probe on a read-only database", fresh.Ready(ctx))
}

// A SQLite file removed or replaced under the server is no database: the
// connections write on to the file they hold, which no start reads again.
// Ready says so, and again once the file is back at its path.
func TestReadyWhenTheSQLiteFileIsGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := sqldbtest.DSN(t, sqldb.SQLite)
	db, err := sqldb.Open(ctx, dsn, sqldb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	path := strings.TrimPrefix(dsn, "sqlite:")
	moved := path + ".moved"
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("ready: %v", err)
	}
	notReady := func(what string) {
		t.Helper()
		if err := db.Ready(ctx); parcela.ErrorCode(err) != parcela.EUNAVAILABLE {
			t.Fatalf("%s: ready answered %v", what, err)
		}
	}
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	notReady("the file removed")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	notReady("another file at its path")
	if err := os.Rename(moved, path); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("ready once the file is back: %v", err)
	}
}

// Checks that find no fresh outcome at once share one probe: sixteen
// checks on an instance without a write of its own (a load balancer's,
// or a flood of them) write one probe row, not sixteen. The writer is one
// connection on SQLite, so its total_changes counts every row written.
func TestReadyChecksAtOnceShareOneProbe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqldbtest.Open(t, sqldb.SQLite, sqldb.Config{})
	changes := func() int {
		t.Helper()
		var n int
		if err := db.SQLDB().QueryRowContext(ctx, "SELECT total_changes()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := changes()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() { errs <- db.Ready(ctx) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("ready: %v", err)
		}
	}
	if n := changes() - before; n != 1 {
		t.Fatalf("16 checks at once wrote %d probe rows, want 1", n)
	}
}
