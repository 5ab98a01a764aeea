package sqldb_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// The cleanup of expired idempotency keys deletes them in short
// transactions: one company's day of idempotent requests (each key holding
// its stored response) deleted in one transaction held SQLite's single
// writer for as long as it took, and every other company's writes waited
// for it (100,000 keys: 0.85 s on the machine it was found on).
func TestIdempotencyCleanupDoesNotHoldTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := parcela.NewTestClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	db := sqldbtest.Open(t, sqldb.SQLite, sqldb.Config{Clock: clock})
	busy := sqldbtest.Company(t, db)
	other := parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}

	// The busy company's expired keys, written as its requests wrote them.
	const keys = 60_000
	body := strings.Repeat("x", 3000)
	tx, err := db.SQLDB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range keys {
		if _, err := tx.Exec(`INSERT INTO idempotency_keys (company_id, environment, idempotency_key, request_hash, state, response_status, response_body, created_at, expires_at)
			VALUES (?, 'sandbox', ?, 'h', 'done', 201, ?, ?, ?)`, busy.ID, fmt.Sprint("k", i), body, 1, 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// The inserts' log is copied to the file first, so the writer is free.
	if _, err := db.SQLDB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}

	// Another company writes all along; its slowest write while the
	// cleanup runs is measured against the cleanup's length.
	var slowest atomic.Int64
	stop := make(chan struct{})
	probing := make(chan struct{})
	go func() {
		defer close(probing)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			began := time.Now()
			if _, err := db.StoreIdempotentResponse(ctx, other, fmt.Sprint("probe", i), parcela.IdempotentResponse{RequestHash: "h", Status: 422}); err != nil {
				t.Error(err)
				return
			}
			if d := int64(time.Since(began)); d > slowest.Load() {
				slowest.Store(d)
			}
		}
	}()
	time.Sleep(10 * time.Millisecond)
	began := time.Now()
	n, err := db.DeleteExpiredIdempotencyKeys(ctx)
	took := time.Since(began)
	close(stop)
	<-probing
	if err != nil || n != keys {
		t.Fatalf("cleanup deleted %d keys, want %d: %v", n, keys, err)
	}
	t.Logf("cleanup %v, the other company's slowest write %v", took, time.Duration(slowest.Load()))
	if s := time.Duration(slowest.Load()); s > took/4 {
		t.Fatalf("another company's write waited %v for a cleanup of %v", s, took)
	}
}
