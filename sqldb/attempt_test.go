package sqldb_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// Attempts recorded at once share transactions (group commit), and each
// lands as if recorded alone: delivered ones settle, failed ones queue
// their retry, and one superseded by a manual retry is kept in the log
// without moving its delivery.
func TestRecordAttemptsConcurrently(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			clock := parcela.NewTestClock(time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC))
			jobs := &jobRecorder{}
			db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock, Enqueuer: jobs})
			app := sqldbtest.Services(db, clock)
			c := sqldbtest.Company(t, db)
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
			hook, err := app.Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
				`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": "bill", "events": ["pending"]}`))
			if err != nil {
				t.Fatal(err)
			}
			chargedOrder(t, app, a, financedOffer(t, app, a))
			ds, _, err := db.Deliveries(ctx, a, hook.ID, parcela.Page{Page: 1, PerPage: 100})
			if err != nil || len(ds) != 12 {
				t.Fatalf("%d deliveries, %v", len(ds), err)
			}
			works := make([]*parcela.DeliveryWork, len(ds))
			for i, d := range ds {
				if works[i], err = app.Deliveries.DeliveryWork(ctx, d.ID); err != nil {
					t.Fatal(err)
				}
				w := works[i]
				if w.Webhook.ID != hook.ID || w.Webhook.URL != hook.URL || w.Webhook.Secret != hook.Secret || w.Deleted || w.Event.ID != d.EventID ||
					!json.Valid(w.Event.Data) || w.Delivery.CompanyID != c.ID {
					t.Fatalf("work %+v of delivery %+v", w, d)
				}
			}
			// A batch job reads them all at once: the same works, an unknown
			// id left out.
			ids := []string{"no-such-delivery"}
			for _, d := range ds {
				ids = append(ids, d.ID)
			}
			batch, err := app.Deliveries.DeliveryWorks(ctx, ids)
			if err != nil || len(batch) != len(works) {
				t.Fatalf("%d works of a batch, %v", len(batch), err)
			}
			for _, b := range batch {
				i := slices.IndexFunc(works, func(w *parcela.DeliveryWork) bool { return w.Delivery.ID == b.Delivery.ID })
				if i < 0 || !reflect.DeepEqual(b, works[i]) {
					t.Fatalf("batch work %+v", b)
				}
			}
			// The last one is retried by hand before its attempt is recorded.
			if err := db.RetryDelivery(ctx, ds[11], clock.Now()); err != nil {
				t.Fatal(err)
			}
			queuedBefore := len(jobs.ids)
			retryAt := clock.Now().Add(time.Minute)
			var wg sync.WaitGroup
			errs := make([]error, len(works))
			for i, w := range works {
				wg.Go(func() {
					r := parcela.AttemptResult{At: clock.Now(), Duration: time.Millisecond}
					status := 200
					if i%2 == 0 {
						r.Delivered, r.Status = true, &status
					} else {
						msg := "receiver answered 500"
						r.Error, r.NextAt = &msg, &retryAt
					}
					errs[i] = app.Deliveries.RecordAttempt(ctx, w, r)
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("attempt %d: %v", i, err)
				}
			}
			for i, d := range ds {
				got, err := db.Delivery(ctx, a, d.ID)
				if err != nil {
					t.Fatal(err)
				}
				want, attempts, listed := parcela.DeliveryDelivered, 1, 1
				switch {
				case i == 11:
					// It went out: the log shows it, of the generation
					// before, and the retry's generation has none yet.
					want, attempts = parcela.DeliveryPending, 0
				case i%2 == 1:
					want = parcela.DeliveryRetrying
				}
				if got.Status != want || got.AttemptCount != attempts || len(got.Attempts) != listed {
					t.Fatalf("delivery %d: %s with %d attempts (%d listed), want %s with %d (%d listed)", i, got.Status, got.AttemptCount, len(got.Attempts),
						want, attempts, listed)
				}
			}
			// Five retries queued (not the superseded one's).
			if n := len(jobs.ids) - queuedBefore; n != 5 {
				t.Fatalf("%d retry jobs queued, want 5", n)
			}
		})
	}
}

// In one batch, each attempt bears on its webhook as if recorded alone, in
// order: a delivery clears the failure record, a failure starts one, 410
// disables; two attempts of one delivery both count, and an attempt
// recorded twice (two runs of its job) counts once.
func TestAttemptBatchInOrder(t *testing.T) {
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
			if err != nil || len(ds) != 12 {
				t.Fatalf("%d deliveries, %v", len(ds), err)
			}
			at := clock.Now()
			retry := at.Add(time.Hour)
			rec := func(i int, h parcela.WebhookHealth, offset time.Duration) parcela.AttemptRecord {
				r := parcela.AttemptRecord{DeliveryID: ds[i].ID, WebhookID: hook.ID, Number: 1, At: at.Add(offset), Status: parcela.DeliveryDelivered,
					Webhook: h, Attempt: parcela.DeliveryAttempt{AttemptedAt: at.Add(offset)}}
				if !h.Delivered {
					r.Status, r.RetryAt = parcela.DeliveryRetrying, &retry
				}
				return r
			}
			failing := parcela.WebhookHealth{URL: hook.URL, DisableReason: "every delivery failed for 5 days", FailingSince: at.Add(-parcela.FailingLimit)}
			delivered := parcela.WebhookHealth{URL: hook.URL, Delivered: true}
			webhook := func() *parcela.Webhook {
				w, err := db.Webhook(ctx, a, hook.ID)
				if err != nil {
					t.Fatal(err)
				}
				return w
			}
			second := rec(5, failing, 6*time.Second)
			second.Number = 2
			again := rec(4, delivered, 6*time.Second) // another run's record of delivery 4's first attempt
			if err := sqldb.RecordAttempts(db, []parcela.AttemptRecord{rec(0, failing, 0), rec(1, delivered, time.Second), rec(2, delivered, 2*time.Second),
				rec(3, failing, 3*time.Second), rec(4, failing, 4*time.Second), rec(5, failing, 5*time.Second), second, again}); err != nil {
				t.Fatal(err)
			}
			if w := webhook(); w.FailingSince == nil || !w.FailingSince.Equal(at.Add(3*time.Second)) || !w.Enabled {
				t.Fatalf("failing since %v (enabled %v), want the first failure after the last delivery", w.FailingSince, w.Enabled)
			}
			if d, err := db.Delivery(ctx, a, ds[5].ID); err != nil || d.AttemptCount != 2 || len(d.Attempts) != 2 {
				t.Fatalf("a delivery attempted twice in one batch: %+v, %v", d, err)
			}
			if d, err := db.Delivery(ctx, a, ds[4].ID); err != nil || d.Status != parcela.DeliveryRetrying || d.AttemptCount != 1 || len(d.Attempts) != 1 {
				t.Fatalf("one attempt recorded twice in one batch: %+v, %v", d, err)
			}
			if err := sqldb.RecordAttempts(db, []parcela.AttemptRecord{rec(6, delivered, 7*time.Second), rec(7, failing, 8*time.Second),
				rec(8, parcela.WebhookHealth{URL: hook.URL, Disable: "the receiver answered 410 Gone"}, 9*time.Second), rec(9, failing, 10*time.Second)}); err != nil {
				t.Fatal(err)
			}
			if w := webhook(); w.Enabled || w.DisabledReason == nil || *w.DisabledReason != "the receiver answered 410 Gone" ||
				w.FailingSince == nil || !w.FailingSince.Equal(at.Add(8*time.Second)) {
				t.Fatalf("after 410 in a batch: enabled %v, reason %v, failing since %v", w.Enabled, w.DisabledReason, w.FailingSince)
			}
		})
	}
}

// hookStore opens engine e's store, its clock at 20:00 UTC on 21 November
// 2026 and its jobs recorded, and a new company's sandbox.
func hookStore(t *testing.T, e sqldb.Dialect) (*sqldb.DB, *parcela.TestClock, parcela.Auth) {
	t.Helper()
	clock := parcela.NewTestClock(time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC))
	db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock, Enqueuer: &jobRecorder{}})
	return db, clock, parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}
}

// Two batches holding failing attempts of the same two webhooks, listed in
// opposite orders, are written at once (PostgreSQL writes up to four
// batches at a time): both commit, neither is rolled back as a deadlock.
// A third transaction holds the first webhook's row until both batches
// wait for it, so the one that gets it next would wait for the second
// webhook, which the other batch had locked first when it moved webhooks
// in its records' order. SQLite has one writer: nothing to interleave.
func TestAttemptBatchesLockWebhooksInOneOrder(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		if e != sqldb.Postgres {
			continue
		}
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			db, clock, a := hookStore(t, e)
			app := sqldbtest.Services(db, clock)
			var hooks [2]*parcela.Webhook
			for i := range hooks {
				h, err := app.Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
					`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": "bill", "events": ["pending"]}`))
				if err != nil {
					t.Fatal(err)
				}
				hooks[i] = h
			}
			if hooks[1].ID < hooks[0].ID {
				hooks[0], hooks[1] = hooks[1], hooks[0]
			}
			chargedOrder(t, app, a, financedOffer(t, app, a))
			var ds [2][]*parcela.Delivery
			for i, h := range hooks {
				var err error
				if ds[i], _, err = db.Deliveries(ctx, a, h.ID, parcela.Page{Page: 1, PerPage: 100}); err != nil || len(ds[i]) < 2 {
					t.Fatalf("%d deliveries, %v", len(ds[i]), err)
				}
			}
			at := clock.Now()
			retry := at.Add(time.Hour)
			failed := func(hook, n int) parcela.AttemptRecord {
				return parcela.AttemptRecord{DeliveryID: ds[hook][n].ID, WebhookID: hooks[hook].ID, Number: 1, At: at,
					Status: parcela.DeliveryRetrying, RetryAt: &retry, Attempt: parcela.DeliveryAttempt{AttemptedAt: at},
					Webhook: parcela.WebhookHealth{URL: hooks[hook].URL, DisableReason: "every delivery failed for 5 days", FailingSince: at.Add(-parcela.FailingLimit)}}
			}
			holder, err := db.SQLDB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Rollback()
			var pid int
			if err := holder.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				t.Fatal(err)
			}
			if _, err := holder.ExecContext(ctx, sqldb.Rebind(db, `SELECT id FROM webhooks WHERE id = ? FOR UPDATE`), hooks[0].ID); err != nil {
				t.Fatal(err)
			}
			// waiting returns once n transactions wait for the holder, or
			// for one that waits for it.
			waiting := func(n int) {
				t.Helper()
				for range 3000 {
					var got int
					if err := db.SQLDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity s
						WHERE $1 = ANY(pg_blocking_pids(s.pid)) OR EXISTS (SELECT 1 FROM pg_stat_activity w
							WHERE $1 = ANY(pg_blocking_pids(w.pid)) AND w.pid = ANY(pg_blocking_pids(s.pid)))`, pid).Scan(&got); err != nil {
						t.Fatal(err)
					}
					if got >= n {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
				t.Fatalf("%d transactions never waited for the holder", n)
			}
			errs := make(chan error, 2)
			go func() { errs <- sqldb.RecordAttemptsOnce(db, []parcela.AttemptRecord{failed(0, 0), failed(1, 0)}) }()
			waiting(1)
			go func() { errs <- sqldb.RecordAttemptsOnce(db, []parcela.AttemptRecord{failed(1, 1), failed(0, 1)}) }()
			waiting(2)
			if err := holder.Commit(); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatalf("a batch failed: %v", err)
				}
			}
		})
	}
}
