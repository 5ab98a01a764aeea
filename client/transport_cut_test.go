package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"parcela/client"
)

// cutShort answers 201 with its headers and half its body, then the
// connection drops: the POST was done (its answer stored under the key),
// only the answer was lost.
func cutShort(w http.ResponseWriter) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	body := `{"id": "1929b262-8d21-4c03-8f10-dc12d94e2fbe", "name": "Curso"}`
	_, _ = buf.WriteString("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n" + body[:20])
	_ = buf.Flush()
	conn.Close()
}

// A connection lost while the answer's body is read is a lost connection
// like any other: the POST is retried with its key, and the server's
// stored answer comes back. The client returned an error for a sale that
// was made, without the key it used (an audit).
func TestAnswerCutShortIsRetried(t *testing.T) {
	f, c := newFlaky(t, cutShort, created)
	err := createProduct(c)
	if err != nil {
		t.Errorf("after %d attempt(s): %v", f.count(), err)
	}
	if f.count() != 2 {
		t.Errorf("%d attempts, want 2 (the same Idempotency-Key twice)", f.count())
	}
}

// The same for a GET, which changes nothing.
func TestGetAnswerCutShortIsRetried(t *testing.T) {
	f, c := newFlaky(t, cutShort, ok)
	_, err := c.ListBillsWithResponse(context.Background(), nil)
	if err != nil {
		t.Errorf("after %d attempt(s): %v", f.count(), err)
	}
}

// A body over the server's 1 MiB is a *Problem 413, at once.
// When the client gives up on a POST whose outcome it cannot know (every
// attempt lost its connection, or the first attempt is still running on
// the server), the caller must be able to retry that same operation later:
// the error has to carry the Idempotency-Key the client generated. It
// carried nothing of it for lost connections, and only inside Detail's
// English text for 409 idempotency_in_flight (an audit).
func TestGivingUpTellsTheKey(t *testing.T) {
	for name, answers := range map[string][]func(http.ResponseWriter){
		"lost connections": {hangUp},
		"still in flight":  {hangUp, problem(409, "idempotency_in_flight")},
	} {
		f, c := newFlaky(t, answers...)
		err := createProduct(c)
		f.mu.Lock()
		key := f.received[0].Header.Get("Idempotency-Key")
		f.mu.Unlock()
		var p *client.Problem
		if client.IdempotencyKeyOf(err) != key || name == "still in flight" && !errors.As(err, &p) {
			t.Errorf("%s: after %d attempts the caller gets %T %q, with no way to resume key %s", name, f.count(), err, err, key)
		}
	}
}
