package sqldb_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// Concurrent hits of one window each get their own count, on every engine:
// the upsert is atomic, so instances sharing the database share the limit.
// Ended windows are deleted, current ones kept.
func TestAddHits(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := t.Context()
		bucket := "test:" + sqldbtest.Suffix()
		start := time.UnixMilli(1_800_000_000_000)
		end := start.Add(time.Second)
		var mu sync.Mutex
		var got []int64
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				n, err := db.AddHits(ctx, bucket, start, end, 1)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, n)
				mu.Unlock()
			})
		}
		wg.Wait()
		slices.Sort(got)
		for i, n := range got {
			if n != int64(i+1) {
				t.Fatalf("counts %v, want 1 to 20 once each", got)
			}
		}
		if n, err := db.AddHits(ctx, bucket, end, end.Add(time.Second), 1); err != nil || n != 1 {
			t.Fatalf("the next window starts at %d (%v)", n, err)
		}
		if _, err := db.DeleteEndedRateWindows(ctx, end); err != nil {
			t.Fatal(err)
		}
		if n, err := db.AddHits(ctx, bucket, start, end, 1); err != nil || n != 1 {
			t.Fatalf("an ended window was kept: %d (%v)", n, err)
		}
		if n, err := db.AddHits(ctx, bucket, end, end.Add(time.Second), 1); err != nil || n != 2 {
			t.Fatalf("the current window was deleted: %d (%v)", n, err)
		}
	})
}

// On PostgreSQL the counts are unlogged: a count writes no WAL, so the
// request that counts does not wait for a WAL flush, and a crash only
// resets the current windows.
func TestRateWindowsUnloggedOnPostgres(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		if db.Dialect() != sqldb.Postgres {
			t.Skip("PostgreSQL only")
		}
		var persistence string
		err := db.SQLDB().QueryRowContext(t.Context(), `SELECT relpersistence FROM pg_class WHERE oid = 'rate_windows'::regclass`).Scan(&persistence)
		if err != nil || persistence != "u" {
			t.Fatalf("rate_windows persistence %q, want unlogged (u): %v", persistence, err)
		}
	})
}
