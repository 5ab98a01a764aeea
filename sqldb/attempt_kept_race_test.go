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
// it, and the retry, deciding by the read, kept one more.
func TestRetryKeepsTheLatestAttemptsRecordedSinceItsRead(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			db, clock, a := hookStore(t, e)
			app := sqldbtest.Services(db, clock)
			hook, err := app.Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
				`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": "bill", "events": ["pending"]}`))
			if err != nil {
				t.Fatal(err)
			}
			chargedOrder(t, app, a, financedOffer(t, app, a))
			ds, _, err := db.Deliveries(ctx, a, hook.ID, parcela.Page{Page: 1, PerPage: 100})
			if err != nil || len(ds) == 0 {
				t.Fatalf("%d deliveries, %v", len(ds), err)
			}
			id := ds[0].ID
			insert := sqldb.Rebind(db, `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, error, response_body)
				VALUES (?, ?, ?, 503, 12, 'down', 'down')`)
			start := clock.Now()
			for i := range parcela.KeptAttempts {
				if _, err := db.SQLDB().ExecContext(ctx, insert, parcela.NewID(), id, start.Add(time.Duration(i)*time.Minute).UnixMilli()); err != nil {
					t.Fatal(err)
				}
			}
			read, err := db.Delivery(ctx, a, id)
			if err != nil || len(read.Attempts) != parcela.KeptAttempts {
				t.Fatalf("read %v, %v", read, err)
			}
			// An attempt of the delivery's generation is recorded after the read.
			if _, err := db.SQLDB().ExecContext(ctx, insert, parcela.NewID(), id, start.Add(parcela.KeptAttempts*time.Minute).UnixMilli()); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Hour * 3)
			if err := db.RetryDelivery(ctx, read, clock.Now()); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := db.SQLDB().QueryRowContext(ctx, sqldb.Rebind(db, `SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id = ?`), id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != parcela.KeptAttempts {
				t.Fatalf("the retry left %d attempts, want the latest %d", n, parcela.KeptAttempts)
			}
		})
	}
}
