package jobs_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"parcela/jobs"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

func rebind(d sqldb.Dialect, q string) string {
	if d != sqldb.Postgres {
		return q
	}
	for n := 1; strings.Contains(q, "?"); n++ {
		q = strings.Replace(q, "?", "$"+strconv.Itoa(n), 1)
	}
	return q
}

// The queue folds count deltas into the per-day counts on its own, and stops
// doing so when stopped.
func TestCountCompactionRuns(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := sqldbtest.Open(t, e, sqldb.Config{})
			company := "compaction-" + sqldbtest.Suffix()
			// Deltas as the bills triggers write them: +2 pending, then one paid.
			for _, d := range []struct {
				status string
				delta  int
			}{{"pending", 1}, {"pending", 1}, {"pending", -1}, {"paid", 1}} {
				if _, err := db.SQLDB().ExecContext(ctx, rebind(db.Dialect(), `INSERT INTO bill_count_deltas (company_id, environment, status, due_day, delta) VALUES (?, 'sandbox', ?, 0, ?)`),
					company, d.status, d.delta); err != nil {
					t.Fatal(err)
				}
			}
			enq, err := jobs.NewEnqueuer("")
			if err != nil {
				t.Fatal(err)
			}
			app := sqldbtest.Services(db, nil)
			q, err := jobs.New(db, enq, jobs.App{Sweeps: app.Sweeps, Deliveries: app.Deliveries, Upkeep: db, Provider: app.Provider},
				jobs.Config{NoPeriodic: true, CountCompaction: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := q.Stop(ctx); err != nil {
					t.Error(err)
				}
			}()
			count := func(table, col string) (rows, sum int) {
				t.Helper()
				err := db.SQLDB().QueryRowContext(ctx, rebind(db.Dialect(), `SELECT COUNT(*), COALESCE(SUM(`+col+`), 0) FROM `+table+` WHERE company_id = ?`), company).Scan(&rows, &sum)
				if err != nil {
					t.Fatal(err)
				}
				return rows, sum
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				if n, _ := count("bill_count_deltas", "delta"); n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("deltas were never folded")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if days, bills := count("bill_day_counts", "bills"); days != 2 || bills != 2 {
				t.Fatalf("after folding: %d day rows holding %d bills, want 2 and 2", days, bills)
			}
		})
	}
}
