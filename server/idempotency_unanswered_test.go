package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/api"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// stalledStore is the store under the webhook use cases whose PATCH and
// DELETE commit and then never return until the test ends: the process
// that served them ended, as far as another instance can tell, between
// the write's commit (with its claim on the key) and its answer.
type stalledStore struct {
	*sqldb.DB
	committed chan struct{}
	release   chan struct{}
	once      sync.Once
}

func (s *stalledStore) stall() {
	s.once.Do(func() { close(s.committed) })
	<-s.release
}

func (s *stalledStore) UpdateWebhook(ctx context.Context, w *parcela.Webhook, were parcela.WebhookSettings, state bool) error {
	err := s.DB.UpdateWebhook(ctx, w, were, state)
	s.stall()
	return err
}

func (s *stalledStore) DeleteWebhook(ctx context.Context, a parcela.Auth, id string, at time.Time) error {
	err := s.DB.DeleteWebhook(ctx, a, id, at)
	s.stall()
	return err
}

// stalledInstance is another instance of the sandbox over the bundle's
// database, whose webhook writes stall after their commit.
func stalledInstance(t *testing.T, b *bundle) (*httptest.Server, *stalledStore) {
	store := &stalledStore{DB: b.db, committed: make(chan struct{}), release: make(chan struct{})}
	svc := server.ServicesOf(b.app, b.db)
	svc.Webhooks = parcela.NewWebhooks(store, b.clock)
	srv := httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Sandbox, Clock: b.clock,
		PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(store.release) }) // before srv.Close, which waits for its requests
	return srv, store
}

// sendUnread sends a request whose answer nobody waits for: it comes
// only as the test ends, if at all.
func sendUnread(url, token, method, body, key string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
}

// unansweredWrite sends method (a PATCH or a DELETE) of a new webhook with
// body and a new key to a stalled instance, and returns once its write
// committed: the webhook's path and the key, unanswered.
func unansweredWrite(t *testing.T, b *bundle, method, body string) (path, key string) {
	t.Helper()
	h := b.hook(t, "https://hooks.example.com/parcela", "order", "in_progress")
	path = v1 + "/webhooks/" + h["id"].(string)
	key = method + "-" + sqldbtest.Suffix()
	stalled, store := stalledInstance(t, b)
	go sendUnread(stalled.URL+path, b.token, method, body, key)
	select {
	case <-store.committed:
	case <-time.After(30 * time.Second):
		t.Fatalf("the %s never reached its write", method)
	}
	return path, key
}

// A PATCH with an Idempotency-Key whose write committed and whose answer
// never came (its instance ended between the two) is not run again by its
// retry: run again, it wrote its values over a PATCH another request made
// of the same webhook since (a lost update), and wrote the change's event
// again. The retry, after the claim's minute, is answered with the webhook
// as it stands, and the retries after it replay that answer.
func TestIdempotentPatchCommittedUnansweredIsNotAppliedAgain(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		path, key := unansweredWrite(t, b, "PATCH", `{"name": "first"}`)

		if r := b.send(b.sandbox.URL, b.token, "PATCH", path, `{"name": "first"}`, map[string]string{"Idempotency-Key": key}); r.Status != 409 {
			t.Fatalf("a retry while the claim is fresh: %d %s", r.Status, r.Body)
		}
		b.clock.Advance(time.Minute)
		if r := b.call("PATCH", path, map[string]any{"name": "second"}); r.Status != 200 {
			t.Fatalf("another PATCH: %d %s", r.Status, r.Body)
		}
		retry := b.send(b.sandbox.URL, b.token, "PATCH", path, `{"name": "first"}`, map[string]string{"Idempotency-Key": key})
		if retry.Status != 200 || retry.JSON(t)["name"] != "second" || retry.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("the retry of a committed, unanswered PATCH: %d %s", retry.Status, retry.Body)
		}
		if r := b.call("GET", path, nil); r.JSON(t)["name"] != "second" {
			t.Fatalf("the webhook after the retry: %s", r.Body)
		}
		again := b.send(b.sandbox.URL, b.token, "PATCH", path, `{"name": "first"}`, map[string]string{"Idempotency-Key": key})
		if again.Status != 200 || string(again.Body) != string(retry.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the retry after it: %d %s", again.Status, again.Body)
		}
		if r := b.send(b.sandbox.URL, b.token, "PATCH", path, `{"name": "third"}`, map[string]string{"Idempotency-Key": key}); r.Status != 422 {
			t.Fatalf("the key with another body: %d %s", r.Status, r.Body)
		}
	})
}

// A DELETE whose write committed and whose answer never came is answered
// 204 on its retry, as its write did delete: run again, it found the
// webhook gone and answered 404.
func TestIdempotentDeleteCommittedUnansweredIsAnsweredNoContent(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		path, key := unansweredWrite(t, b, "DELETE", "")
		b.clock.Advance(time.Minute)
		if r := b.send(b.sandbox.URL, b.token, "DELETE", path, nil, map[string]string{"Idempotency-Key": key}); r.Status != 204 || len(r.Body) != 0 {
			t.Fatalf("the retry of a committed, unanswered DELETE: %d %s", r.Status, r.Body)
		}
		if r := b.call("GET", path, nil); r.Status != 404 {
			t.Fatalf("the webhook after it: %d %s", r.Status, r.Body)
		}
	})
}

// The retry of an unanswered PATCH whose webhook was deleted since is
// answered 404, as its GET is, and the 404 is not stored: each retry reads
// again (it was stored and replayed for 24 hours).
func TestIdempotentPatchUnansweredOfADeletedEntity(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		path, key := unansweredWrite(t, b, "PATCH", `{"name": "first"}`)
		b.clock.Advance(time.Minute)
		b.call("DELETE", path, nil).want(t, 204)
		retry := b.send(b.sandbox.URL, b.token, "PATCH", path, `{"name": "first"}`, map[string]string{"Idempotency-Key": key})
		again := b.send(b.sandbox.URL, b.token, "PATCH", path, `{"name": "first"}`, map[string]string{"Idempotency-Key": key})
		if retry.Status != 404 || again.Status != 404 || again.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("the retry of a committed PATCH whose webhook was deleted since: %d %s; the one after: %d, replayed %q",
				retry.Status, retry.Body, again.Status, again.Header.Get("Idempotent-Replayed"))
		}
	})
}

// Two retries of an unanswered PATCH at once, on two instances, answer
// alike, and the answer stored is the one replayed.
func TestIdempotentPatchUnansweredRetriedAtOnceOnTwoInstances(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		path, key := unansweredWrite(t, b, "PATCH", `{"name": "first"}`)
		other, _ := stalledInstance(t, b)
		b.clock.Advance(time.Minute)
		hdr := map[string]string{"Idempotency-Key": key}
		for range 5 {
			res := make(chan resp, 2)
			go func() { res <- b.send(b.sandbox.URL, b.token, "PATCH", path, `{"name": "first"}`, hdr) }()
			go func() { res <- b.send(other.URL, b.token, "PATCH", path, `{"name": "first"}`, hdr) }()
			r1, r2 := <-res, <-res
			if r1.Status != 200 || r2.Status != 200 || string(r1.Body) != string(r2.Body) {
				t.Fatalf("%d %s / %d %s", r1.Status, r1.Body, r2.Status, r2.Body)
			}
		}
	})
}

// earlyReader is an instance's idempotency store whose read of a key came
// before another instance's write committed its claim on it: it finds
// nothing. Its stores are the database's.
type earlyReader struct{ server.IdempotencyStore }

func (earlyReader) IdempotentResponse(context.Context, parcela.Auth, string) (*parcela.IdempotentResponse, error) {
	return nil, nil
}

// A DELETE committed unanswered, and its duplicate (same key and body) on
// an instance that read the key before that commit runs afterwards: it
// finds the webhook gone, and its 404 was stored over the unanswered
// record, so every retry of the DELETE that did delete was replayed 404.
// Only the answer read back replaces an unanswered record now.
func TestIdempotentDeleteUnansweredIsNotReplacedByARerun(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		path, key := unansweredWrite(t, b, "DELETE", "")
		b.clock.Advance(time.Minute) // the first instance ended: its claim is spent, unanswered

		svc := server.ServicesOf(b.app, b.db)
		svc.Idempotency = earlyReader{b.db}
		early := httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Sandbox, Clock: b.clock,
			PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}))
		t.Cleanup(early.Close)
		if dup := b.send(early.URL, b.token, "DELETE", path, "", map[string]string{"Idempotency-Key": key}); dup.Status != 204 {
			t.Fatalf("the duplicate that read the key early: %d %s, want the 204 read back", dup.Status, dup.Body)
		}

		retry := b.send(b.sandbox.URL, b.token, "DELETE", path, "", map[string]string{"Idempotency-Key": key})
		if retry.Status != 204 {
			t.Fatalf("the retry of a DELETE that committed: %d %s (replayed %q), want 204",
				retry.Status, retry.Body, retry.Header.Get("Idempotent-Replayed"))
		}
	})
}
