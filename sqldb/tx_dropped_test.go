package sqldb

import "testing"

// A transaction whose connection the server dropped: a statement finds it
// gone, the next is refused as a bad connection and database/sql closes
// the connection, handing it back to pgxpool, which destroys it in a
// goroutine. The rollback that follows must not touch that connection (the
// race detector catches it when it does) and has nothing left to undo;
// a commit reports the loss.
func TestTransactionOnADroppedConnection(t *testing.T) {
	t.Parallel()
	db := postgresDB(t, testDSNs(t))
	if db == nil {
		t.Skip("PARCELA_TEST_POSTGRES_URL is not set")
	}
	ctx := t.Context()

	for _, end := range []string{"rollback", "commit"} {
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if err := tx.r.queryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if _, err := db.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := tx.r.exec(ctx, `SELECT 1`); err == nil {
				t.Fatalf("%s: a statement ran on a terminated connection", end)
			}
		}
		if end == "rollback" {
			if err := tx.Rollback(); err != nil {
				t.Fatalf("rollback of a dropped transaction: %v", err)
			}
			continue
		}
		err = tx.Commit(ctx)
		if err == nil {
			t.Fatal("a dropped transaction committed")
		}
		if classify(err) != unavailable {
			t.Fatalf("commit on a dropped connection is %v, not unavailable", err)
		}
	}
	// The pool still serves.
	if err := db.inTx(ctx, func(tx *Tx) error {
		_, err := tx.r.exec(ctx, `SELECT 1`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
