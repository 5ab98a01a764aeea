package sqldb_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// interleaved is the store with one write slipped in right after the next
// read of a webhook: a change that commits between a request's read and
// its write.
type interleaved struct {
	*sqldb.DB
	between func()
}

func (s *interleaved) Webhook(ctx context.Context, a parcela.Auth, id string) (*parcela.Webhook, error) {
	w, err := s.DB.Webhook(ctx, a, id)
	if f := s.between; f != nil {
		s.between = nil
		f()
	}
	return w, err
}

// A PATCH or a rotation writes what it changes and nothing it read before
// another change committed: a webhook the worker disabled meanwhile stays
// disabled, a success's cleared failure record stays cleared, a rotation
// stays rotated, and two rotations at once leave both answered secrets
// signing.
func TestWebhookWritesKeepConcurrentChanges(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			db, clock, a := hookStore(t, e)
			app := sqldbtest.Services(db, clock)
			store := &interleaved{DB: db}
			hooks := parcela.NewWebhooks(store, clock)
			hook, err := hooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
				`{"name": "h", "url": "https://example.com/hook", "verb": "post", "entity": "order", "events": ["in_progress"]}`))
			if err != nil {
				t.Fatal(err)
			}
			// attempt records an attempt of a new delivery to hook.
			attempt := func(r parcela.AttemptResult) {
				t.Helper()
				w := newDeliveryWork(t, db, app, clock, a, hook.ID)
				r.At = clock.Now()
				if err := app.Deliveries.RecordAttempt(ctx, w, r); err != nil {
					t.Fatal(err)
				}
			}
			rename := func(name string) *parcela.Webhook {
				t.Helper()
				w, err := hooks.UpdateWebhook(ctx, a, hook.ID, parcela.WebhookRequest{Name: &name})
				if err != nil {
					t.Fatal(err)
				}
				return w
			}
			read := func() *parcela.Webhook {
				t.Helper()
				return readWebhook(t, db, a, hook.ID)
			}

			// A failure starts the failure record; a success clears it while
			// a PATCH is between its read and its write.
			msg := "receiver answered 500"
			attempt(parcela.AttemptResult{Error: &msg})
			if read().FailingSince == nil {
				t.Fatal("a failure started no failure record")
			}
			ok := 204
			store.between = func() { attempt(parcela.AttemptResult{Status: &ok, Delivered: true}) }
			rename("renamed while delivered")
			if w := read(); w.FailingSince != nil || w.Name != "renamed while delivered" {
				t.Fatalf("after a success during a PATCH: failing since %v, name %q", w.FailingSince, w.Name)
			}

			// The receiver answers 410 while a PATCH is between its read and
			// its write.
			gone := 410
			store.between = func() { attempt(parcela.AttemptResult{Status: &gone, Gone: true}) }
			answered := rename("renamed while gone")
			if w := read(); w.Enabled || w.DisabledReason == nil || w.Name != "renamed while gone" {
				t.Fatalf("after 410 during a PATCH: enabled %v, reason %v, name %q", w.Enabled, w.DisabledReason, w.Name)
			}
			if answered.Enabled {
				t.Fatal("the PATCH answered the webhook enabled; it is disabled")
			}

			// A rotation commits while a PATCH is between its read and its write.
			var rotated *parcela.Webhook
			store.between = func() {
				if rotated, err = hooks.RotateWebhookSecret(ctx, a, hook.ID); err != nil {
					t.Fatal(err)
				}
			}
			rename("renamed while rotated")
			if w := read(); w.Secret != rotated.Secret || w.PreviousSecret == nil || *w.PreviousSecret != hook.Secret {
				t.Fatal("a PATCH undid a rotation that committed during it")
			}

			// Two rotations at once: both answered secrets sign afterwards.
			var first *parcela.Webhook
			store.between = func() {
				if first, err = hooks.RotateWebhookSecret(ctx, a, hook.ID); err != nil {
					t.Fatal(err)
				}
			}
			second, err := hooks.RotateWebhookSecret(ctx, a, hook.ID)
			if err != nil {
				t.Fatal(err)
			}
			signing := read().Secrets(clock.Now())
			for _, s := range []string{first.Secret, second.Secret} {
				if !slices.Contains(signing, s) {
					t.Fatalf("a secret answered by a rotation does not sign: %d secrets sign", len(signing))
				}
			}
		})
	}
}

// Two PATCHes of one webhook, each naming its own settings, the second's
// write after the first committed: the webhook keeps both (its events go to
// the URL the first PATCH set, not back to the one the second had read),
// and the second answers the webhook as it stands.
func TestRaceTwoWebhookPatches(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			db, clock, a := hookStore(t, e)
			store := &interleaved{DB: db}
			hooks := parcela.NewWebhooks(store, clock)
			cases := []struct{ first, second string }{
				{`{"url": "https://new.example.com/hook"}`, `{"events": ["in_progress", "canceled"]}`},
				{`{"events": ["canceled"], "verb": "put"}`, `{"name": "pedidos"}`},
			}
			for _, tc := range cases {
				hook, err := hooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
					`{"name": "h", "url": "https://example.com/hook", "verb": "post", "entity": "order", "events": ["in_progress"]}`))
				if err != nil {
					t.Fatal(err)
				}
				var first error
				store.between = func() { _, first = hooks.UpdateWebhook(ctx, a, hook.ID, fromJSON[parcela.WebhookRequest](t, tc.first)) }
				answered, err := hooks.UpdateWebhook(ctx, a, hook.ID, fromJSON[parcela.WebhookRequest](t, tc.second))
				if err != nil || first != nil {
					t.Fatalf("%s then %s: %v, %v", tc.first, tc.second, first, err)
				}
				got, err := db.Webhook(ctx, a, hook.ID)
				if err != nil {
					t.Fatal(err)
				}
				want := *hook
				for _, body := range []string{tc.first, tc.second} {
					if err := want.Apply(fromJSON[parcela.WebhookRequest](t, body), false); err != nil {
						t.Fatal(err)
					}
				}
				settings := func(w *parcela.Webhook) string {
					return fmt.Sprintf("name %q, url %s, events %v, verb %s", w.Name, w.URL, w.Events, w.Verb)
				}
				if settings(got) != settings(&want) || settings(answered) != settings(&want) {
					t.Fatalf("%s then %s: stored %s, answered %s; want %s", tc.first, tc.second, settings(got), settings(answered), settings(&want))
				}
			}
		})
	}
}

// A manual retry of a delivery whose webhook is deleted or disabled
// between the retry's read of the webhook and its write is refused, as it
// is when the webhook was already so: the check was the read's alone, and
// a retry committed after the DELETE or the PATCH that disabled the
// webhook had answered was answered 200 pending, and its attempt then
// recorded as not sent.
func TestRetryRacingTheWebhooksDeletionOrDisableIsRefused(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			db, clock, a := hookStore(t, e)
			app := sqldbtest.Services(db, clock)
			store := &interleaved{DB: db}
			hooks := parcela.NewWebhooks(store, clock)
			for _, stop := range []string{"delete", "disable"} {
				hook, err := app.Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
					`{"name": "h", "url": "https://example.com/hook", "verb": "post", "entity": "order", "events": ["in_progress"]}`))
				if err != nil {
					t.Fatal(err)
				}
				ev := parcela.Event{ID: parcela.NewID(), CompanyID: a.CompanyID, Environment: a.Environment, Entity: "order", EntityID: parcela.NewID(),
					Event: "in_progress", Data: []byte(`{}`), CreatedAt: clock.Now()}
				if err := db.WriteEvents(ctx, []parcela.Event{ev}); err != nil {
					t.Fatal(err)
				}
				ds, _, err := db.Deliveries(ctx, a, hook.ID, parcela.Page{Page: 1, PerPage: 1})
				if err != nil || len(ds) != 1 {
					t.Fatalf("delivery: %v %v", ds, err)
				}
				store.between = func() {
					if stop == "delete" {
						err = app.Webhooks.DeleteWebhook(ctx, a, hook.ID)
					} else {
						_, err = app.Webhooks.UpdateWebhook(ctx, a, hook.ID, fromJSON[parcela.WebhookRequest](t, `{"enabled": false}`))
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				_, err = hooks.RetryDelivery(ctx, a, ds[0].ID)
				wantCode(t, "a retry racing the webhook's "+stop, err, parcela.EINVALIDSTATE)
				if got, err := db.Delivery(ctx, a, ds[0].ID); err != nil || got.Generation != ds[0].Generation {
					t.Fatalf("%s: delivery at generation %d after the refused retry (was %d): %v", stop, got.Generation, ds[0].Generation, err)
				}
			}
		})
	}
}

// A PATCH moves a webhook to another URL while an attempt to the old one
// is under way: that attempt's answer is the old address's, and bears
// neither on the webhook now sent elsewhere nor on its failure record. A
// 410 from an endpoint the company had just moved away from disabled the
// webhook after the PATCH had answered it enabled at its new URL, and its
// next events were not sent there; a failure there started its failure
// record. An attempt to the URL the webhook still has counts as before.
func TestAttemptToAnOldURLLeavesTheWebhookAlone(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, clock, a := hookStore(t, e)
			app := sqldbtest.Services(db, clock)
			hook, err := app.Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
				`{"name": "h", "url": "https://old.example.com/hook", "verb": "post", "entity": "order", "events": ["in_progress"]}`))
			if err != nil {
				t.Fatal(err)
			}
			// underWay reads the work of a new delivery to hook, as the
			// worker does before it sends.
			underWay := func() *parcela.DeliveryWork {
				t.Helper()
				return newDeliveryWork(t, db, app, clock, a, hook.ID)
			}
			record := func(w *parcela.DeliveryWork, r parcela.AttemptResult) {
				t.Helper()
				r.At = clock.Now()
				if err := app.Deliveries.RecordAttempt(ctx, w, r); err != nil {
					t.Fatal(err)
				}
			}
			read := func() *parcela.Webhook {
				t.Helper()
				return readWebhook(t, db, a, hook.ID)
			}
			move := func(url string) {
				t.Helper()
				w, err := app.Webhooks.UpdateWebhook(ctx, a, hook.ID, parcela.WebhookRequest{URL: &url})
				if err != nil || !w.Enabled || w.URL != url {
					t.Fatalf("PATCH url: %+v %v", w, err)
				}
			}

			gone, failed := 410, "the request to old.example.com failed"
			toOld := underWay()
			move("https://new.example.com/hook")
			record(toOld, parcela.AttemptResult{Status: &gone, Gone: true})
			if w := read(); !w.Enabled || w.DisabledReason != nil || w.FailingSince != nil {
				t.Fatalf("a 410 of the old URL: enabled %v, reason %v, failing since %v", w.Enabled, w.DisabledReason, w.FailingSince)
			}
			record(underWay(), parcela.AttemptResult{Error: &failed}) // read after the PATCH: to the new URL
			since := read().FailingSince
			if since == nil {
				t.Fatal("a failure of the webhook's URL started no failure record")
			}

			// Moved back while another attempt to the new URL is under way:
			// the move clears the new URL's failures, and that attempt's
			// success does not end the old one's that follow.
			ok := 204
			toNew := underWay()
			move("https://old.example.com/hook")
			if w := read(); w.FailingSince != nil {
				t.Fatalf("moved, the webhook is failing since %v, the other URL's failure", w.FailingSince)
			}
			clock.Advance(time.Minute)
			record(underWay(), parcela.AttemptResult{Error: &failed})
			if since = read().FailingSince; since == nil {
				t.Fatal("a failure of the webhook's URL started no failure record")
			}
			clock.Advance(time.Minute)
			record(toNew, parcela.AttemptResult{Status: &ok, Delivered: true})
			if w := read(); w.FailingSince == nil || !w.FailingSince.Equal(*since) {
				t.Fatalf("a success of the URL left: failing since %v, want %v", w.FailingSince, since)
			}
			record(underWay(), parcela.AttemptResult{Status: &gone, Gone: true})
			if w := read(); w.Enabled || w.DisabledReason == nil {
				t.Fatal("a 410 of the webhook's own URL did not disable it")
			}
		})
	}
}

// newDeliveryWork writes an order event hookID subscribes to and reads
// its new delivery's work, as the worker does before it sends.
func newDeliveryWork(t *testing.T, db *sqldb.DB, app *parcela.Services, clock *parcela.TestClock, a parcela.Auth, hookID string) *parcela.DeliveryWork {
	t.Helper()
	ctx := context.Background()
	ev := parcela.Event{ID: parcela.NewID(), CompanyID: a.CompanyID, Environment: a.Environment, Entity: "order", EntityID: parcela.NewID(),
		Event: "in_progress", Data: []byte(`{}`), CreatedAt: clock.Now()}
	if err := db.WriteEvents(ctx, []parcela.Event{ev}); err != nil {
		t.Fatal(err)
	}
	ds, _, err := db.Deliveries(ctx, a, hookID, parcela.Page{Page: 1, PerPage: 1})
	if err != nil || len(ds) != 1 || ds[0].EventID != ev.ID {
		t.Fatalf("delivery of %s: %v %v", ev.ID, ds, err)
	}
	w, err := app.Deliveries.DeliveryWork(ctx, ds[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// readWebhook reads the webhook id as stored.
func readWebhook(t *testing.T, db *sqldb.DB, a parcela.Auth, id string) *parcela.Webhook {
	t.Helper()
	w, err := db.Webhook(context.Background(), a, id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
