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
			_, app, a, offer := chargeSetup(b, e)
			if _, err := app.Webhooks.CreateWebhook(b.Context(), a, fromJSON[parcela.WebhookRequest](b,
				`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": "bill", "events": ["pending"]}`)); err != nil {
				b.Fatal(err)
			}
			start := sqldb.ProcessCPU(b)
			for b.Loop() {
				chargedOrder(b, app, a, offer)
			}
			b.ReportMetric(float64(sqldb.ProcessCPU(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkBills reads a page of ten pending bills with their payments and
// the count, as GET /bills does, from a company with four charged orders.
func BenchmarkBills(b *testing.B) {
	for _, e := range sqldbtest.Engines() {
		b.Run(string(e), func(b *testing.B) {
			db, app, a, offer := chargeSetup(b, e)
			for range 4 {
				chargedOrder(b, app, a, offer)
			}
			f := parcela.BillFilter{Status: "pending", Page: parcela.Page{Page: 2, PerPage: 10}}
			for b.Loop() {
				bills, total, _, err := db.Bills(b.Context(), a, f)
				if err != nil || len(bills) != 10 || total < 20 {
					b.Fatalf("%d bills of %d, %v", len(bills), total, err)
				}
			}
		})
	}
}

// chargeSetup opens a store of engine e with a company and a financed
// offer of its sandbox.
func chargeSetup(b *testing.B, e sqldb.Dialect) (*sqldb.DB, *parcela.Services, parcela.Auth, *parcela.Offer) {
	db := sqldbtest.Open(b, e, sqldb.Config{Enqueuer: &jobRecorder{}})
	app := sqldbtest.Services(db, nil)
	c := sqldbtest.Company(b, db)
	a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
	return db, app, a, financedOffer(b, app, a)
}

// BenchmarkBillForPayer reads an installment for its checkout page, as
// the payer's link opens it: the bill's key, the bill and its offer.
func BenchmarkBillForPayer(b *testing.B) {
	for _, e := range sqldbtest.Engines() {
		b.Run(string(e), func(b *testing.B) {
			_, app, a, offer := chargeSetup(b, e)
			bill := chargedOrder(b, app, a, offer).Billings[0].Bills[1]
			start := sqldb.ProcessCPU(b)
			for b.Loop() {
				if _, _, err := app.Checkout.BillForPayer(b.Context(), parcela.Sandbox, bill.ID, bill.AuthenticationCode); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sqldb.ProcessCPU(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
