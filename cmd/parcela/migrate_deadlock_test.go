package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"parcela/sqldb"
)

// A migration that PostgreSQL aborts to break a deadlock with an instance
// still writing is run again. 00023 locks companies, orders, billings and
// bills before anything else; a writer holding bills that then reads
// billings waits for it while it waits for the writer. The writer waits
// longer before looking for a deadlock, so the migration is the one
// aborted; it runs again once the writer commits.
func TestMigrationAbortedByADeadlockRunsAgain(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	migrate := func() error {
		db, err := sqldb.Open(ctx, dsn, sqldb.Config{})
		if err != nil {
			return err
		}
		defer db.Close()
		return db.Migrate(ctx)
	}
	if err := migrate(); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Back to 00022: the Down sections of 00023 and those after it, the
	// latest first, and their versions' rows (Up refuses a version missing
	// below one applied).
	for _, m := range []struct {
		version int
		file    string
	}{
		{28, ""}, // in Go (sqldb/migrate_boleto_expiry.go), with no Down
		{27, "../../sqldb/migrations/postgres/00027_rows_of_earlier_releases.sql"},
		{26, "../../sqldb/migrations/postgres/00026_offer_sales_counted.sql"},
		{25, "../../sqldb/migrations/00025_boleto_expiry_after_its_last_day.sql"},
		{24, "../../sqldb/migrations/00024_orders_by_offer.sql"},
		{23, "../../sqldb/migrations/postgres/00023_bills_keyed_to_their_billing.sql"},
	} {
		down := ""
		if m.file != "" {
			sql, err := os.ReadFile(m.file)
			if err != nil {
				t.Fatal(err)
			}
			var ok bool
			if _, down, ok = strings.Cut(string(sql), "-- +goose Down"); !ok {
				t.Fatalf("%s has no Down section", m.file)
			}
		}
		for _, q := range []string{down, `DELETE FROM goose_db_version WHERE version_id = ` + strconv.Itoa(m.version)} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadlocks := func() int64 {
		var n int64
		if err := conn.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := deadlocks()

	writer, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(ctx)
	if _, err := writer.Exec(ctx, `SET deadlock_timeout = '20s'`); err != nil {
		t.Skipf("setting deadlock_timeout takes a superuser: %v", err)
	}
	tx, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE bills IN ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- migrate() }()
	for {
		var waiting bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE c.relname = 'bills' AND l.mode = 'AccessExclusiveLock' AND NOT l.granted)`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the migration ended without waiting for the writer: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := tx.Exec(ctx, `SELECT count(*) FROM billings`); err != nil {
		t.Fatalf("the writer: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the migration, after a deadlock: %v", err)
	}
	for deadlocks() == before {
		select {
		case <-ctx.Done():
			t.Fatal("no deadlock was counted: the test did not make one")
		case <-time.After(50 * time.Millisecond):
		}
	}
	var keys int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE conname IN ('bills_billing_sale_fkey', 'billings_sale_key')`).Scan(&keys)
	if err != nil || keys != 2 {
		t.Fatalf("%d of the migration's two constraints (%v)", keys, err)
	}
}
