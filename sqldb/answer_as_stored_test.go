package sqldb_test

import (
	"context"
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// lateAttemptStore is the store, except that right after the retry's read
// of the delivery, one more attempt of its generation is recorded (its
// job's record racing the company's POST /retry).
type lateAttemptStore struct {
	*sqldb.DB
	after func()
}

func (s *lateAttemptStore) Delivery(ctx context.Context, a parcela.Auth, id string) (*parcela.Delivery, error) {
	d, err := s.DB.Delivery(ctx, a, id)
	if s.after != nil {
		s.after()
		s.after = nil
	}
	return d, err
}

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
			store := &lateAttemptStore{DB: l.db, after: func() { l.log(t, parcela.KeptAttempts, parcela.KeptAttempts+1) }}
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

// renamingStore is the store, except that right after a use case's first
// read of a webhook, another request renames it (a PATCH racing it).
type renamingStore struct {
	*sqldb.DB
	after func()
}

func (s *renamingStore) Webhook(ctx context.Context, a parcela.Auth, id string) (*parcela.Webhook, error) {
	w, err := s.DB.Webhook(ctx, a, id)
	if s.after != nil {
		f := s.after
		s.after = nil
		f()
	}
	return w, err
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
			store := &renamingStore{DB: db, after: func() {
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
