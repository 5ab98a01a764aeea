package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"parcela"
)

// testDSNs are the engines this test run has.
func testDSNs(t *testing.T) map[Dialect]string {
	t.Helper()
	dsns := map[Dialect]string{SQLite: filepath.Join(t.TempDir(), "errors.db")}
	if pg := os.Getenv("PARCELA_TEST_POSTGRES_URL"); pg != "" {
		dsns[Postgres] = pg
	}
	return dsns
}

// withScratchTable runs f on each engine this test run has, with a table
// of its own created there with columns (and dropped after).
func withScratchTable(t *testing.T, columns string, f func(t *testing.T, ctx context.Context, db *DB, w runner, table string)) {
	t.Helper()
	for dialect, dsn := range testDSNs(t) {
		t.Run(string(dialect), func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(ctx, dsn, Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			table := "scratch_" + strings.ReplaceAll(parcela.NewID(), "-", "")
			w := db.writer()
			if _, err := w.exec(ctx, `CREATE TABLE `+table+` (`+columns+`)`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if _, err := w.exec(ctx, `DROP TABLE `+table); err != nil {
					t.Error(err)
				}
			})
			f(t, ctx, db, w, table)
		})
	}
}

// The boundary reads a driver's error by its code, on both engines.
func TestErrorBoundary(t *testing.T) {
	t.Parallel()
	withScratchTable(t, `id TEXT PRIMARY KEY, slug TEXT UNIQUE`, func(t *testing.T, ctx context.Context, db *DB, w runner, table string) {
		if _, err := w.exec(ctx, `INSERT INTO `+table+` (id, slug) VALUES (?, ?)`, "a", "x"); err != nil {
			t.Fatal(err)
		}

		// A unique violation (of a UNIQUE column, or of the primary key) is a conflict, whatever its text.
		for _, row := range [][2]string{{"b", "x"}, {"a", "y"}} {
			_, err := w.exec(ctx, `INSERT INTO `+table+` (id, slug) VALUES (?, ?)`, row[0], row[1])
			if classify(err) != uniqueViolation {
				t.Fatalf("%v is not read as a unique violation", err)
			}
			if got := failed("insert", err); !parcela.IsConflict(got) {
				t.Fatalf("boundary turned %v into %v", err, got)
			}
		}

		// A missing row is not found; any other failure is wrapped with
		// its operation and stays internal, never a 4xx.
		err := w.queryRow(ctx, `SELECT id FROM `+table+` WHERE id = ?`, "nope").Scan(new(string))
		if got := failed("read thing", err); parcela.ErrorCode(got) != parcela.ENOTFOUND {
			t.Fatalf("no rows: %v", got)
		}
		_, err = w.exec(ctx, `INSERT INTO `+table+`_missing (id) VALUES (?)`, "a")
		got := failed("write thing", err)
		if parcela.ErrorCode(got) != parcela.EINTERNAL || !strings.HasPrefix(got.Error(), "write thing: ") || !errors.Is(got, err) {
			t.Fatalf("other error: %v (code %s)", got, parcela.ErrorCode(got))
		}
		if classify(err) != otherError {
			t.Fatalf("%v read as %d", err, classify(err))
		}
	})
}

// The domain's own errors cross the boundary as they are.
func TestErrorBoundaryKeepsDomainErrors(t *testing.T) {
	t.Parallel()
	for _, err := range []error{parcela.NotFound("bill"), parcela.Errorf(parcela.EINVALIDSTATE, "no"), &parcela.Conflict{Entity: "billing", ID: "b"}} {
		if got := failed("op", fmt.Errorf("wrapped: %w", err)); !errors.Is(got, err) || parcela.ErrorCode(got) != parcela.ErrorCode(err) {
			t.Errorf("%v became %v", err, got)
		}
	}
	if failed("op", nil) != nil {
		t.Error("nil became an error")
	}
}

// busyError is a real SQLITE_BUSY on path's database: the error of a
// transaction begun while another connection holds the write lock, by a
// connection that does not wait.
func busyError(t *testing.T, path string) error {
	t.Helper()
	ctx := context.Background()
	holder, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	lock, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	busy, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tx, err := busy.BeginTx(ctx, nil)
	if err == nil {
		tx.Rollback()
		t.Fatal("a transaction began while another held the write lock")
	}
	return err
}

// postgresDB is a store on the test PostgreSQL, closed with the test; nil
// when none is set.
func postgresDB(t *testing.T, dsns map[Dialect]string) *DB {
	t.Helper()
	pg, ok := dsns[Postgres]
	if !ok {
		return nil
	}
	db, err := Open(context.Background(), pg, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// raise makes PostgreSQL raise an error of code in tx.
func raise(ctx context.Context, tx *Tx, code string) error {
	_, err := tx.r.exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '`+code+`'; END $$`)
	return err
}

// SQLite's busy and PostgreSQL's serialization failures and deadlocks are
// transient: the transaction runs again.
func TestTransientErrorsRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsns := testDSNs(t)

	// A real SQLITE_BUSY: another connection holds the write lock and this
	// one does not wait.
	path := dsns[SQLite]
	err := busyError(t, path)
	if classify(err) != transient {
		t.Fatalf("%v is not read as transient", err)
	}

	db := postgresDB(t, dsns)
	if db == nil {
		return
	}
	for _, code := range []string{pgSerializationFailure, pgDeadlockDetected} {
		runs := 0
		err := db.inTx(ctx, func(tx *Tx) error {
			if runs++; runs == 1 {
				return raise(ctx, tx, code)
			}
			return nil
		})
		if err != nil || runs != 2 {
			t.Fatalf("%s: ran %d times, %v", code, runs, err)
		}
	}
	// Anything else runs once.
	runs := 0
	err = db.inTx(ctx, func(tx *Tx) error {
		runs++
		return raise(ctx, tx, "XX000")
	})
	if err == nil || runs != 1 {
		t.Fatalf("ran %d times, %v", runs, err)
	}
}

// A database that cannot take work (full, read-only, shutting down,
// unreachable) is unavailable, 503, whatever its text: PostgreSQL's codes
// raised by the real server, and a connection refused.
func TestUnavailableErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := net.Dial("tcp", "127.0.0.1:1") // nothing listens on port 1
	if got := failed("write", err); classify(err) != unavailable || parcela.ErrorCode(got) != parcela.EUNAVAILABLE || !errors.Is(got, err) {
		t.Fatalf("%v became %v", err, got)
	}
	pg, ok := testDSNs(t)[Postgres]
	if !ok {
		return
	}
	db, err := Open(ctx, pg, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, code := range []string{"53100", "53200", "53300", "57P01", "57P03", "08006", "25006", "58030", "55P03", "57014"} {
		_, err := db.write.ExecContext(ctx, `DO $$ BEGIN RAISE EXCEPTION 'failing' USING ERRCODE = '`+code+`'; END $$`)
		got := failed("write", err)
		if parcela.ErrorCode(got) != parcela.EUNAVAILABLE || !errors.Is(got, err) || strings.Contains(parcela.ErrorMessage(got), "failing") {
			t.Errorf("%s: %v became %v", code, err, got)
		}
	}
	_, err = db.write.ExecContext(ctx, `DO $$ BEGIN RAISE EXCEPTION 'failing' USING ERRCODE = '22012'; END $$`)
	if parcela.ErrorCode(failed("write", err)) != parcela.EINTERNAL {
		t.Errorf("a division by zero is not an outage: %v", failed("write", err))
	}
}

// A transaction whose connection PostgreSQL dropped (a crash, a restart,
// an administrator's kill) fails its next step with pgx's "conn closed":
// the database is unavailable, 503, not an internal error.
func TestLostConnectionMidTransactionIsUnavailable(t *testing.T) {
	t.Parallel()
	pg, ok := testDSNs(t)[Postgres]
	if !ok {
		t.Skip("PARCELA_TEST_POSTGRES_URL is not set")
	}
	ctx := context.Background()
	db, err := Open(ctx, pg, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var pid int
	if err := tx.r.queryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	_, err = tx.r.exec(ctx, `SELECT 1`) // learns that the connection is gone
	if parcela.ErrorCode(failed("read", err)) != parcela.EUNAVAILABLE {
		t.Errorf("the statement that found the connection gone: %v became %v", err, failed("read", err))
	}
	err = tx.Commit(ctx)
	if got := failed("create order", err); parcela.ErrorCode(got) != parcela.EUNAVAILABLE {
		t.Fatalf("a commit on the dropped connection: %v became %v (code %s)", err, got, parcela.ErrorCode(got))
	}
}

// A transaction that still fails transiently after inTx ran it
// txAttempts times (transactions that keep deadlocking, a serialization
// failure, SQLITE_BUSY) did nothing: it is a 409 conflict its client
// retries, never a 500. It answered 500 internal error, which an
// Idempotency-Key's retry and the client's backoff took for a bug.
func TestTransientErrorsThatOutlastTheRetriesAreConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := testDSNs(t)[SQLite]
	err := busyError(t, path)
	if got := failed("apply change", err); parcela.ErrorCode(got) != parcela.ECONFLICT || !errors.Is(got, err) {
		t.Errorf("SQLITE_BUSY: %v became %v (code %s)", err, got, parcela.ErrorCode(got))
	} else if msg := parcela.ErrorMessage(got); strings.Contains(msg, "concurrent requests") || !strings.Contains(msg, "another process") {
		// One writer connection: no request of the client's held the
		// lock, and the message blamed them.
		t.Errorf("SQLITE_BUSY told the client %q", msg)
	}

	db := postgresDB(t, testDSNs(t))
	if db == nil {
		return
	}
	for _, code := range []string{pgSerializationFailure, pgDeadlockDetected} {
		runs := 0
		err := db.inTx(ctx, func(tx *Tx) error {
			runs++
			return raise(ctx, tx, code)
		})
		got := failed("apply change", err)
		if runs != txAttempts || parcela.ErrorCode(got) != parcela.ECONFLICT || !errors.Is(got, err) {
			t.Errorf("%s: ran %d times, %v became %v (code %s)", code, runs, err, got, parcela.ErrorCode(got))
		}
	}
	// A request that ended before its next run is answered as ended (the
	// server's 503 at its write timeout, 499 for a client gone), not 409.
	cctx, cancel := context.WithCancel(ctx)
	err = db.inTx(cctx, func(tx *Tx) error {
		err := raise(ctx, tx, pgDeadlockDetected)
		cancel()
		return err
	})
	if got := failed("apply change", err); !errors.Is(got, context.Canceled) || parcela.ErrorCode(got) != parcela.EINTERNAL {
		t.Errorf("canceled between runs: %v became %v (code %s)", err, got, parcela.ErrorCode(got))
	}
}
