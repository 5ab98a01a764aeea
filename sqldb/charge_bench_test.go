package sqldb_test

import (
	"testing"

	"parcela"
	"parcela/bank"
	"parcela/sqldb/sqldbtest"
)

// BenchmarkCharge creates and charges one financed order (12 bills, 14
// events, a webhook subscribed to the bills) per iteration.
func BenchmarkCharge(b *testing.B) {
	for _, e := range sqldbtest.Engines() {
		b.Run(string(e), func(b *testing.B) {
			db := sqldbtest.Open(b, e, nil)
			db.Payments, db.Enqueue = bank.NewSimulated(), &jobRecorder{}
			c := sqldbtest.Company(b, db)
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
			if _, err := db.CreateWebhook(b.Context(), a, fromJSON[parcela.WebhookRequest](b,
				`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": "bill", "events": ["pending"]}`)); err != nil {
				b.Fatal(err)
			}
			offer := financedOffer(b, db, a)
			for b.Loop() {
				chargedOrder(b, db, a, offer)
			}
		})
	}
}
