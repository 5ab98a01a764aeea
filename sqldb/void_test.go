package sqldb_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"parcela"
	"parcela/jobs"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// voidJobs counts the River jobs of queue that void payment id (any, when
// empty) at its provider.
func voidJobs(t *testing.T, db *sqldb.DB, queue, id string) int {
	t.Helper()
	var n int
	err := db.SQLDB().QueryRowContext(context.Background(), sqldb.Rebind(db,
		`SELECT COUNT(*) FROM river_job WHERE queue = ? AND kind = ? AND CAST(args AS TEXT) LIKE ?`), queue, jobs.VoidArgs{}.Kind(), "%"+id+"%").Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A change that cancels an issued payment queues its void at the provider
// in its own transaction: no job when the change fails, even once the
// void was queued (a later statement of the change fails) or when it
// conflicts, and exactly one when it commits.
func TestVoidJobCommitsWithItsChange(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			enq, err := jobs.NewEnqueuer("webhooks_" + sqldbtest.Suffix())
			if err != nil {
				t.Fatal(err)
			}
			clock := parcela.NewTestClock(time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC))
			db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock, Enqueuer: enq})
			app := sqldbtest.Services(db, clock)
			c := sqldbtest.Company(t, db)
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
			o := chargedOrder(t, app, a, financedOffer(t, app, a))
			pix := o.Billings[0].Bills[0].Payments[0]
			if pix.Status != parcela.PaymentUnpaid || pix.Method != parcela.MethodPix {
				t.Fatalf("down payment %s %s", pix.Method, pix.Status)
			}

			// The change is written up to its events, whose second insert
			// fails (the same event twice): nothing of it stays.
			ev := parcela.Event{ID: parcela.NewID(), CompanyID: c.ID, Environment: a.Environment, Entity: "order", EntityID: o.ID,
				Event: "canceled", Data: json.RawMessage(`{}`), CreatedAt: clock.Now()}
			canceled := *pix
			canceled.Status = parcela.PaymentCanceled
			failing := &parcela.Change{At: clock.Now(), Payments: []parcela.PaymentMove{{Payment: &canceled, From: parcela.PaymentUnpaid}},
				Voids: []parcela.CancelRequest{{PaymentID: pix.ID, Environment: a.Environment}}, Events: []parcela.Event{ev, ev}}
			if err := db.Apply(ctx, failing); err == nil {
				t.Fatal("a change writing one event twice was applied")
			}
			if n := voidJobs(t, db, enq.VoidQueue(), pix.ID); n != 0 {
				t.Fatalf("%d void jobs of a change that failed", n)
			}
			// A stale change (decided on a status the payment no longer has) conflicts.
			stale := *failing
			stale.Payments = []parcela.PaymentMove{{Payment: &canceled, From: parcela.PaymentPaid}}
			stale.Events = nil
			if err := db.Apply(ctx, &stale); !parcela.IsConflict(err) {
				t.Fatalf("stale change: %v", err)
			}
			if n := voidJobs(t, db, enq.VoidQueue(), pix.ID); n != 0 {
				t.Fatalf("%d void jobs of a change that conflicted", n)
			}

			if _, err := app.Orders.CancelOrder(ctx, a, o.ID, "customer_dropout"); err != nil {
				t.Fatal(err)
			}
			if n := voidJobs(t, db, enq.VoidQueue(), pix.ID); n != 1 {
				t.Fatalf("%d void jobs of the committed cancelation, want 1", n)
			}
			// The installments had no payment issued yet: nothing else to void.
			if n := voidJobs(t, db, enq.VoidQueue(), ""); n != 1 {
				t.Fatalf("%d void jobs in all, want 1", n)
			}
		})
	}
}
