package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"parcela"
	"parcela/api"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// leavingClientStore is the store under the webhook use cases, whose
// UpdateWebhook commits and then waits for the request's client to leave:
// the use case reads the webhook back on a canceled context.
type leavingClientStore struct {
	*sqldb.DB
	committed chan struct{}
}

func (s *leavingClientStore) UpdateWebhook(ctx context.Context, w *parcela.Webhook, were parcela.WebhookSettings, state bool) error {
	err := s.DB.UpdateWebhook(ctx, w, were, state)
	close(s.committed)
	<-ctx.Done()
	return err
}

// A PATCH with an Idempotency-Key whose write committed (with its claim on
// the key) and whose client left before the entity was read back: the
// retry is answered with the webhook as patched, never with the 499 the
// request that lost its client was counted as. That 499, with no body,
// was stored over the claim as the request's answer and replayed to every
// retry for 24 hours, so the client was never told that its PATCH took
// effect.
func TestIdempotentPatchWhoseClientLeftAfterItsCommitIsAnsweredOnRetry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.skipContract = true // the first request gets no answer
		h := b.hook(t, "https://hooks.example.com/parcela", "order", "in_progress")
		store := &leavingClientStore{DB: b.db, committed: make(chan struct{})}
		svc := server.ServicesOf(b.app, b.db)
		svc.Webhooks = parcela.NewWebhooks(store, b.clock)
		leaving := httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Sandbox, Clock: b.clock,
			PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}))
		t.Cleanup(leaving.Close)

		path := v1 + "/webhooks/" + h["id"].(string)
		body := `{"name": "renamed"}`
		key := "patch-" + sqldbtest.Suffix()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "PATCH", leaving.URL+path, bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+b.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		sent := make(chan error, 1)
		go func() {
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			sent <- err
		}()
		select {
		case <-store.committed:
		case <-time.After(30 * time.Second):
			t.Fatal("the PATCH never reached its write")
		}
		cancel() // the client leaves once the write committed
		if err := <-sent; err == nil {
			t.Fatal("the PATCH was answered though its client left")
		}

		var again resp
		deadline := time.Now().Add(30 * time.Second)
		for {
			again = b.send(b.sandbox.URL, b.token, "PATCH", path, body, map[string]string{"Idempotency-Key": key})
			if again.Status != 409 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond) // the first is still storing its answer
		}
		if again.Status != 200 || again.JSON(t)["name"] != "renamed" {
			t.Fatalf("the retry of a committed PATCH got %d %s", again.Status, again.Body)
		}
	})
}
