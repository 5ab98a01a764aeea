package sqldb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// loggedDelivery is a delivery of a webhook of a charged order, and a way
// to add attempts to its log: the i-th at start + i minutes, its error
// "attempt i".
type loggedDelivery struct {
	db    *sqldb.DB
	clock *parcela.TestClock
	app   *parcela.Services
	a     parcela.Auth
	id    string
	start time.Time
}

func newLoggedDelivery(t *testing.T, e sqldb.Dialect) *loggedDelivery {
	t.Helper()
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
	return &loggedDelivery{db: db, clock: clock, app: app, a: a, id: ds[0].ID, start: clock.Now()}
}

// log adds attempts from to to-1 to the delivery's log.
func (l *loggedDelivery) log(t *testing.T, from, to int) {
	t.Helper()
	insert := sqldb.Rebind(l.db, `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, error, response_body)
		VALUES (?, ?, ?, 503, 12, ?, 'down')`)
	for i := from; i < to; i++ {
		at := l.start.Add(time.Duration(i) * time.Minute).UnixMilli()
		if _, err := l.db.SQLDB().ExecContext(context.Background(), insert, parcela.NewID(), l.id, at, fmt.Sprintf("attempt %d", i)); err != nil {
			t.Fatal(err)
		}
	}
}

// A manual retry keeps the delivery's latest parcela.KeptAttempts attempts:
// retried in a loop, a delivery's log grew by an attempt each time, and
// every read of it held them all.
func TestRetryKeepsTheLatestAttempts(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			l := newLoggedDelivery(t, e)
			const logged = parcela.KeptAttempts + 7
			l.log(t, 0, logged)
			l.clock.Advance(logged * time.Minute)
			retried, err := l.app.Webhooks.RetryDelivery(ctx, l.a, l.id)
			if err != nil {
				t.Fatal(err)
			}
			read, err := l.db.Delivery(ctx, l.a, l.id)
			if err != nil {
				t.Fatal(err)
			}
			for name, got := range map[string]*parcela.Delivery{"answered": retried, "read": read} {
				if len(got.Attempts) != parcela.KeptAttempts {
					t.Fatalf("%s: %d attempts, want the latest %d", name, len(got.Attempts), parcela.KeptAttempts)
				}
				first, last := got.Attempts[0], got.Attempts[len(got.Attempts)-1]
				if first.Error == nil || *first.Error != fmt.Sprintf("attempt %d", logged-parcela.KeptAttempts) ||
					last.Error == nil || *last.Error != fmt.Sprintf("attempt %d", logged-1) {
					t.Errorf("%s: attempts from %v to %v, want the latest %d in order", name, first.Error, last.Error, parcela.KeptAttempts)
				}
			}
			// A log within the bound is kept whole.
			if _, err := l.app.Webhooks.RetryDelivery(ctx, l.a, l.id); err != nil {
				t.Fatal(err)
			}
			if read, err = l.db.Delivery(ctx, l.a, l.id); err != nil || len(read.Attempts) != parcela.KeptAttempts {
				t.Fatalf("after a second retry: %v, %v", read, err)
			}
		})
	}
}

// A listing of deliveries shows each one's latest parcela.ListedAttempts
// attempts, oldest first, and how many are kept; the delivery read alone
// shows them all. A page of a thousand deliveries with a hundred kept
// attempts each took 2.4 GB of memory to answer.
func TestDeliveryListingShowsTheLatestAttempts(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			l := newLoggedDelivery(t, e)
			const logged = parcela.ListedAttempts + 5
			l.log(t, 0, logged)
			ds, _, err := l.db.Deliveries(ctx, l.a, "", parcela.Page{Page: 1, PerPage: 100})
			if err != nil {
				t.Fatal(err)
			}
			var listed *parcela.Delivery
			for _, d := range ds {
				if d.ID == l.id {
					listed = d
				} else if len(d.Attempts) != 0 || d.AttemptsTotal != 0 {
					t.Errorf("delivery %s without attempts listed %d of %d", d.ID, len(d.Attempts), d.AttemptsTotal)
				}
			}
			if listed == nil {
				t.Fatal("the delivery is not listed")
			}
			if len(listed.Attempts) != parcela.ListedAttempts || listed.AttemptsTotal != logged {
				t.Fatalf("listed %d attempts of %d, want the latest %d of %d", len(listed.Attempts), listed.AttemptsTotal, parcela.ListedAttempts, logged)
			}
			for i, a := range listed.Attempts {
				if want := fmt.Sprintf("attempt %d", logged-parcela.ListedAttempts+i); a.Error == nil || *a.Error != want {
					t.Errorf("listed attempt %d is %v, want %q", i, a.Error, want)
				}
			}
			read, err := l.app.Webhooks.Delivery(ctx, l.a, l.id)
			if err != nil {
				t.Fatal(err)
			}
			if len(read.Attempts) != logged || read.AttemptsTotal != logged {
				t.Fatalf("read %d attempts of %d, want all %d", len(read.Attempts), read.AttemptsTotal, logged)
			}
		})
	}
}
