package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"parcela/sqldb"
)

// freshPostgres creates an empty PostgreSQL database for one test and drops
// it when the test ends.
func freshPostgres(t *testing.T) string {
	t.Helper()
	base := os.Getenv("PARCELA_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("PARCELA_TEST_POSTGRES_URL is not set")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	name := "parcela_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// An upgrade that brings only a new migration of the job queue's schema
// finds parcela's own migrations applied: every replica gets past them at
// once, and all of them apply the queue's at the same moment.
func TestConcurrentQueueMigrationsOnPostgres(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	ctx := context.Background()
	for round := range 3 {
		db, err := sqldb.Open(ctx, dsn, sqldb.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		m, err := rivermigrate.New(riverpgxv5.New(db.PgxPool()), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{MaxSteps: round + 1}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		const n = 4
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				errs[i] = run(ctx, []string{"migrate"}, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &bytes.Buffer{}, &bytes.Buffer{})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, instance %d: %v", round, i, err)
			}
		}
	}
}

// A database migrated by a newer parcela (a rollback of the binary alone)
// is refused at start, naming the versions, on both engines: the older code
// would write rows that lack what the newer schema expects.
func TestNewerDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	engines := map[string]func() string{"sqlite": func() string { return tempDSN(t) }}
	if os.Getenv("PARCELA_TEST_POSTGRES_URL") != "" {
		engines["postgres"] = func() string { return freshPostgres(t) }
	}
	ctx := context.Background()
	for engine, newDSN := range engines {
		for table, insert := range map[string]string{
			"goose_db_version": "INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, TRUE)",
			"river_migration":  "INSERT INTO river_migration (line, version) VALUES ('main', 9999)",
		} {
			dsn := newDSN()
			cli(t, dsn, "migrate")
			db, err := sqldb.Open(ctx, dsn, sqldb.Config{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = db.SQLDB().ExecContext(ctx, insert)
			db.Close()
			if err != nil {
				t.Fatalf("%s: %v", engine, err)
			}
			for _, args := range [][]string{{"migrate"}, {"serve"}} {
				// A serve that starts is stopped, and fails the test.
				ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				err := run(ctx, args, env(map[string]string{"PARCELA_DATABASE_URL": dsn, "PARCELA_ADDR": "127.0.0.1:0",
					"PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"}), &bytes.Buffer{}, &bytes.Buffer{})
				if err == nil || !strings.Contains(err.Error(), "9999") || !strings.Contains(err.Error(), "newer parcela") {
					t.Errorf("%s, %s at 9999, %s: %v", engine, table, args[0], err)
				}
				cancel()
			}
		}
	}
}

// A database address that is neither a PostgreSQL URL nor a plain file
// path (a PostgreSQL keyword/value string, another scheme, a scheme
// misspelt, a SQLite URI or a path with options) is refused, and no SQLite
// file is made of it: served as one,
// production would run on a new empty database beside the real one. Its
// text is not repeated, as it may hold a password.
func TestDatabaseAddressThatIsNoPathIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, dsn := range []string{
		"host=db.internal user=parcela password=s3cret dbname=parcela",
		" dbname=parcela",
		"postgress://parcela:s3cret@db.internal/parcela",
		"Postgres://parcela:s3cret@db.internal/parcela",
		"mysql://parcela:s3cret@db.internal/parcela",
		"postgres:parcela",
		// The URI forms other SQLite drivers take: each made a new empty
		// file named with its options, with its own lock, beside the
		// real database.
		"sqlite:parcela.db?_pragma=busy_timeout(5000)",
		"parcela.db?mode=rwc",
		"sqlite:file:parcela.db",
		"sqlite:file:parcela.db?cache=shared",
		"sqlite:///parcela.db", // opened /parcela.db
		"sqlite://parcela.db",
	} {
		err := run(context.Background(), []string{"migrate"}, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "sqlite:") {
			t.Errorf("%q: %v", dsn, err)
		}
	}
	if files, _ := os.ReadDir(dir); len(files) > 0 {
		t.Errorf("files made: %v", files)
	}
	// A path given as sqlite: is taken as it is.
	cli(t, "sqlite:a=b.db", "migrate")
	if _, err := os.Stat(filepath.Join(dir, "a=b.db")); err != nil {
		t.Error(err)
	}
}
