package server_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"parcela"
	"parcela/api"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// collidingReadBackStore is the store under the webhook use cases whose
// read of the webhook after an UpdateWebhook committed fails as the store
// fails a statement still transiently failing (SQLITE_BUSY, a deadlock, a
// serialization failure) once: 409 conflict, "nothing was done; retry".
type collidingReadBackStore struct {
	*sqldb.DB
	committed atomic.Bool
	failed    atomic.Bool
}

func (s *collidingReadBackStore) UpdateWebhook(ctx context.Context, w *parcela.Webhook, were parcela.WebhookSettings, state bool) error {
	err := s.DB.UpdateWebhook(ctx, w, were, state)
	s.committed.Store(err == nil)
	return err
}

func (s *collidingReadBackStore) Webhook(ctx context.Context, a parcela.Auth, id string) (*parcela.Webhook, error) {
	if s.committed.Load() && s.failed.CompareAndSwap(false, true) {
		return nil, &parcela.Error{Code: parcela.ECONFLICT, Message: "concurrent requests kept colliding in the database; nothing was done; retry"}
	}
	return s.DB.Webhook(ctx, a, id)
}

// A PATCH with an Idempotency-Key whose write committed (with its claim on
// the key) and whose answer then failed as a 409 conflict (the read back
// of the entity still colliding after its retries, which the store now
// answers 409, not 500) is not answered that 409 on every retry for 24
// hours: the 409 says nothing was done, and was stored over the claim as
// the request's answer, so the client, retrying a conflict as told, was
// never told that its PATCH took effect. Its claim is dropped, as a 5xx's
// is, and the retry runs again.
func TestIdempotentPatchWhoseReadBackCollidedIsAnsweredOnRetry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.skipContract = true // the first answer is checked below
		h := b.hook(t, "https://hooks.example.com/parcela", "order", "in_progress")
		store := &collidingReadBackStore{DB: b.db}
		svc := server.ServicesOf(b.app, b.db)
		svc.Webhooks = parcela.NewWebhooks(store, b.clock)
		srv := httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Sandbox, Clock: b.clock,
			PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}))
		t.Cleanup(srv.Close)

		path := v1 + "/webhooks/" + h["id"].(string)
		body := `{"name": "renamed"}`
		key := "patch-" + sqldbtest.Suffix()
		first := b.send(srv.URL, b.token, "PATCH", path, body, map[string]string{"Idempotency-Key": key})
		if first.Status != 409 || !store.failed.Load() {
			t.Fatalf("the PATCH whose read back collided got %d %s", first.Status, first.Body)
		}
		again := b.send(srv.URL, b.token, "PATCH", path, body, map[string]string{"Idempotency-Key": key})
		if again.Status != 200 || again.JSON(t)["name"] != "renamed" {
			t.Fatalf("the retry of a committed PATCH got %d %s", again.Status, again.Body)
		}
	})
}
