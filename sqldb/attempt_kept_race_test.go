package sqldb_test

import (
	"context"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A retry keeps the latest parcela.KeptAttempts attempts of the log as it
// is when the retry commits, not as it was read: an attempt of the
// generation before recorded between the read and the retry (its job's
// record racing the company's request) took a log read at the bound past
// it, and the retry, deciding by the read, kept one more. The store now
// refuses a retry decided on a log that changed since (a conflict, which
// the use case meets by reading again), and the retry read again keeps
// the latest.
func TestRetryKeepsTheLatestAttemptsRecordedSinceItsRead(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			l := newLoggedDelivery(t, e)
			l.log(t, 0, parcela.KeptAttempts)
			read, err := l.db.Delivery(ctx, l.a, l.id)
			if err != nil || len(read.Attempts) != parcela.KeptAttempts {
				t.Fatalf("read %v, %v", read, err)
			}
			// An attempt of the delivery's generation is recorded after the read.
			l.log(t, parcela.KeptAttempts, parcela.KeptAttempts+1)
			l.clock.Advance(time.Hour * 3)
			if err := l.db.RetryDelivery(ctx, read, l.clock.Now()); !parcela.IsConflict(err) {
				t.Fatalf("a retry decided on the log before an attempt: %v, want a conflict", err)
			}
			if _, err := l.app.Webhooks.RetryDelivery(ctx, l.a, l.id); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := l.db.SQLDB().QueryRowContext(ctx, sqldb.Rebind(l.db, `SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id = ?`), l.id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != parcela.KeptAttempts {
				t.Fatalf("the retry left %d attempts, want the latest %d", n, parcela.KeptAttempts)
			}
		})
	}
}
