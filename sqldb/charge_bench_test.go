package sqldb_test

import (
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// BenchmarkCharge creates and charges one financed order (12 bills, 14
// events, a webhook subscribed to the bills) per iteration.
func BenchmarkCharge(b *testing.B) {
	for _, e := range sqldbtest.Engines() {
		b.Run(string(e), func(b *testing.B) {
			db := sqldbtest.Open(b, e, sqldb.Config{Enqueuer: &jobRecorder{}})
			app := sqldbtest.Services(db, nil)
			c := sqldbtest.Company(b, db)
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
			if _, err := app.Webhooks.CreateWebhook(b.Context(), a, fromJSON[parcela.WebhookRequest](b,
				`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": "bill", "events": ["pending"]}`)); err != nil {
				b.Fatal(err)
			}
			offer := financedOffer(b, app, a)
			for b.Loop() {
				chargedOrder(b, app, a, offer)
			}
		})
	}
}
