package sqldb_test

import (
	"context"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// On PostgreSQL (READ COMMITTED) the retry's guard counted the log in its
// UPDATE's snapshot, but its DELETE (a later statement) saw an attempt
// committed in between: a superseded attempt of an earlier generation
// (keepSuperseded, which moves no delivery) recorded while the retry
// waited for its webhook's row (a PATCH of the webhook holding it). The
// retry then trimmed a log it had not read, and answered an attempt it
// deleted (a review). Now the attempt's record waits for the retry: the
// retry answers the log as it committed it, and the attempt lands after.
func TestRetryAnswersItsLogBesideASupersededAttemptOnPostgres(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		if e != sqldb.Postgres {
			continue
		}
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			l := newLoggedDelivery(t, e)
			l.log(t, 0, parcela.KeptAttempts)
			l.clock.Advance(3 * time.Hour)
			// A first retry: generation 0 -> 1 (an attempt of generation 0 is still in flight).
			first, err := l.app.Webhooks.RetryDelivery(ctx, l.a, l.id)
			if err != nil {
				t.Fatal(err)
			}
			hookID := first.WebhookID
			// A PATCH of the webhook holds its row.
			holder, err := l.db.SQLDB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Rollback()
			var pid int
			if err := holder.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				t.Fatal(err)
			}
			if _, err := holder.ExecContext(ctx, sqldb.Rebind(l.db, `UPDATE webhooks SET name = 'renamed' WHERE id = ?`), hookID); err != nil {
				t.Fatal(err)
			}
			type result struct {
				d   *parcela.Delivery
				err error
			}
			done := make(chan result, 1)
			go func() {
				d, err := l.app.Webhooks.RetryDelivery(ctx, l.a, l.id) // generation 1 -> 2
				done <- result{d, err}
			}()
			for i := 0; ; i++ {
				var got int
				if err := l.db.SQLDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got >= 1 {
					break
				}
				if i > 3000 {
					t.Fatal("the retry never waited for the webhook's row")
				}
				time.Sleep(10 * time.Millisecond)
			}
			// The attempt of generation 0 ends and is recorded (superseded:
			// kept in the log, the delivery not moved), beside the retry.
			at := l.start.Add(parcela.KeptAttempts * time.Minute)
			rec := parcela.AttemptRecord{DeliveryID: l.id, Environment: l.a.Environment, WebhookID: hookID, Generation: 0, Number: 2, At: at,
				Status: parcela.DeliveryDelivered, Attempt: parcela.DeliveryAttempt{AttemptedAt: at, DurationMS: 5}}
			recorded := make(chan error, 1)
			go func() { recorded <- sqldb.RecordAttemptsOnce(l.db, []parcela.AttemptRecord{rec}) }()
			select {
			case err := <-recorded:
				t.Fatalf("the attempt was recorded while the retry held its delivery: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			if err := holder.Commit(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if err := <-recorded; err != nil {
				t.Fatal(err)
			}
			got, err := l.db.Delivery(ctx, l.a, l.id)
			if err != nil {
				t.Fatal(err)
			}
			// The log as stored is the one answered, and the attempt recorded after it.
			var kept []parcela.DeliveryAttempt
			for _, a := range got.Attempts {
				if !a.AttemptedAt.Equal(at) {
					kept = append(kept, a)
				}
			}
			if len(kept) != len(got.Attempts)-1 {
				t.Fatalf("the attempt recorded beside the retry is not in the log (%d attempts)", len(got.Attempts))
			}
			if len(r.d.Attempts) != len(kept) {
				t.Fatalf("answered %d attempts, the retry kept %d", len(r.d.Attempts), len(kept))
			}
			for i := range kept {
				if !r.d.Attempts[i].AttemptedAt.Equal(kept[i].AttemptedAt) {
					t.Fatalf("attempt %d: answered %s, kept %s (the answer lists an attempt the retry deleted)", i, r.d.Attempts[i].AttemptedAt, kept[i].AttemptedAt)
				}
			}
		})
	}
}
