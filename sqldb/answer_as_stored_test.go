package sqldb_test

import (
	"context"
	"testing"

	"parcela"
	"parcela/sqldb/sqldbtest"
)

// A manual retry answers the delivery as the store left it: the log it
// answers is the log the retry kept, which a GET then shows. An attempt
// recorded between the retry's read and its write made it answer an
// attempt it had deleted and miss the one it kept (an audit).
func TestRetryAnswersTheLogItKept(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			l := newLoggedDelivery(t, e)
			l.log(t, 0, parcela.KeptAttempts)
			// The retry reads the delivery, then its webhook: the attempt is recorded after both.
			store := &interleaved{DB: l.db, between: func() { l.log(t, parcela.KeptAttempts, parcela.KeptAttempts+1) }}
			hooks := parcela.NewWebhooks(store, l.clock)
			answered, err := hooks.RetryDelivery(ctx, l.a, l.id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := l.db.Delivery(ctx, l.a, l.id)
			if err != nil {
				t.Fatal(err)
			}
			if len(answered.Attempts) != len(got.Attempts) {
				t.Fatalf("answered %d attempts, stored %d", len(answered.Attempts), len(got.Attempts))
			}
			for i := range got.Attempts {
				if !answered.Attempts[i].AttemptedAt.Equal(got.Attempts[i].AttemptedAt) {
					t.Fatalf("attempt %d: answered %s, stored %s (the answer lists an attempt the retry deleted and misses the one it kept)",
						i, answered.Attempts[i].AttemptedAt, got.Attempts[i].AttemptedAt)
				}
			}
		})
	}
}

// A secret rotation racing a rename: both stand, and the rotation answers
// the webhook as it is stored (the answer, stored under an
// Idempotency-Key, is replayed for 24 hours). It answered the name read
// before the rename (an audit).
func TestRotateAnswersTheWebhookAsStored(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			db, clock, a := hookStore(t, e)
			app := sqldbtest.Services(db, clock)
			hook, err := app.Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
				`{"name": "before", "url": "https://example.com/hook", "verb": "POST", "entity": "bill", "events": ["pending"]}`))
			if err != nil {
				t.Fatal(err)
			}
			store := &interleaved{DB: db, between: func() {
				if _, err := app.Webhooks.UpdateWebhook(ctx, a, hook.ID, fromJSON[parcela.WebhookRequest](t, `{"name": "after"}`)); err != nil {
					t.Fatal(err)
				}
			}}
			rotated, err := parcela.NewWebhooks(store, clock).RotateWebhookSecret(ctx, a, hook.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.Webhook(ctx, a, hook.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Secret != rotated.Secret {
				t.Fatalf("the rotation did not stand")
			}
			if rotated.Name != got.Name {
				t.Fatalf("rotation answered name %q, stored %q", rotated.Name, got.Name)
			}
		})
	}
}
