package main

import (
	"bytes"
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"parcela/sqldb"
)

// On SQLite nothing serializes the processes that migrate one file
// (migrate, company, token and demo take no lock and run beside a server,
// and a server's lock is its own): a release's migrate and its serve
// started at once on the earlier release's file both read the versions
// applied, and both apply the first one missing, one after the other. The
// second, which finds it applied under it and rolled its own attempt back
// whole, goes on from the version it now finds, where it stopped with that
// migration's SQL error ("index orders_offer already exists", "no such
// column: due_hour"), a start failed as if the database were half-migrated.
func TestConcurrentMigrationsOnSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, db := migratedFile(t)
	// The file as the release before 00024 left it. 00025, 00027 and 00028,
	// data migrations run again by the second process, find nothing left
	// to change (boletos expiring at a millisecond 999, or mid-day; seats
	// counted; keys in flight) and are recorded again; 00024 and 00026
	// fail when run twice.
	var latest int64
	if err := db.SQLDB().QueryRowContext(ctx, "SELECT MAX(version_id) FROM goose_db_version").Scan(&latest); err != nil {
		t.Fatal(err)
	}
	if latest != 28 {
		t.Fatalf("the test undoes 00024 to 00028 by hand, and the latest migration is %d: undo it too", latest)
	}
	if _, err := db.SQLDB().ExecContext(ctx, "ALTER TABLE offers DROP COLUMN sold; DROP INDEX orders_offer; DELETE FROM goose_db_version WHERE version_id IN (24, 25, 26, 27, 28)"); err != nil {
		t.Fatal(err)
	}
	migrateAtOnce(t, db, dsn)
	var applied, moved, counted int
	if err := db.SQLDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM goose_db_version WHERE version_id = 24").Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if err := db.SQLDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM goose_db_version WHERE version_id = 26").Scan(&counted); err != nil {
		t.Fatal(err)
	}
	if err := db.SQLDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM goose_db_version WHERE version_id = 25").Scan(&moved); err != nil {
		t.Fatal(err)
	}
	var index string
	if err := db.SQLDB().QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE name = 'orders_offer'").Scan(&index); err != nil || !strings.Contains(index, "offer_id") {
		t.Errorf("orders_offer: %q, %v", index, err)
	}
	if applied != 1 || moved < 1 || counted != 1 {
		t.Errorf("00024 recorded %d times, want once; 00025 %d times, want at least once; 00026 %d times, want once", applied, moved, counted)
	}
}

// The same for River's migrations, which take no lock of their own either:
// a release that brings a River with a new migration, migrated by its
// migrate and its serve at once, had the second fail on the migration the
// first applied ("duplicate column", or the version's row already there).
func TestConcurrentQueueMigrationsOnSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, db := migratedFile(t)
	// The file as a release with the River before its latest migration
	// left it.
	m, err := rivermigrate.New(riversqlite.New(db.SQLDB()), nil)
	if err != nil {
		t.Fatal(err)
	}
	all := m.AllVersions()
	latest := all[len(all)-1].Version
	if _, err := m.Migrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{MaxSteps: 1}); err != nil {
		t.Fatal(err)
	}
	if got := riverVersion(t, db); got != latest-1 {
		t.Fatalf("River at %d after one step down from %d", got, latest)
	}
	migrateAtOnce(t, db, dsn)
	if got := riverVersion(t, db); got != latest {
		t.Errorf("River at %d, want %d", got, latest)
	}
	var rows int
	if err := db.SQLDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM river_migration WHERE line = 'main' AND version = ?", latest).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("River's %d recorded %d times (%v), want once", latest, rows, err)
	}
}

func riverVersion(t *testing.T, db *sqldb.DB) int {
	t.Helper()
	var v int
	if err := db.SQLDB().QueryRowContext(context.Background(), "SELECT COALESCE(MAX(version), 0) FROM river_migration WHERE line = 'main'").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// migrateAtOnce runs three migrates of dsn together: held writing, the
// file lets each read the versions applied and makes them wait to apply
// what they found missing, together. Each must succeed.
func migrateAtOnce(t *testing.T, db *sqldb.DB, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.SQLDB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE goose_db_version SET tstamp = tstamp WHERE version_id = 1"); err != nil {
		t.Fatal(err)
	}
	const n = 3
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = run(ctx, []string{"migrate"}, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &bytes.Buffer{}, &bytes.Buffer{})
		})
	}
	time.Sleep(2 * time.Second)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
}

// migratedFile is a SQLite file migrated by the CLI, and the store open on
// it until the test ends.
func migratedFile(t *testing.T) (string, *sqldb.DB) {
	t.Helper()
	dsn := tempDSN(t)
	cli(t, dsn, "migrate")
	db, err := sqldb.Open(context.Background(), dsn, sqldb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return dsn, db
}
