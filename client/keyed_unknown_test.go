package client_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"parcela/client"
)

// The first attempt's 201 was cut (the product was made); the retry is
// rate limited past the longest wait. The caller got a 429 *Problem and
// no key, though the POST was surely done: sent again without the key it
// was made twice (a review).
func TestKeyedCutThen429KeepsKey(t *testing.T) {
	f, c := newFlaky(t, cutShort, problem(429, "rate_limited", "Retry-After", "3600"))
	err := createProduct(c)
	if err == nil {
		t.Fatal("no error")
	}
	if client.IdempotencyKeyOf(err) == "" {
		t.Errorf("after %d attempts (the first done, its body cut): %T %v carries no key", f.count(), err, err)
	}
}

// The first attempt lost its connection (maybe done), the last is a 503:
// the outcome is unknown, and the key comes with the 503.
func TestKeyedHangUpThen503KeepsKey(t *testing.T) {
	f, c := newFlakyWith(t, []client.Option{client.WithMaxAttempts(2)}, hangUp, problem(503, "unavailable"))
	err := createProduct(c)
	if err == nil {
		t.Fatal("no error")
	}
	if client.IdempotencyKeyOf(err) == "" {
		t.Errorf("after %d attempts (the first lost): %T %v carries no key", f.count(), err, err)
	}
}

// A 409 idempotency_in_flight is an answer, not a network error: its
// key's wrapper answered Timeout and Temporary, and a caller retrying on
// network errors took it for one (a review).
func TestKeyedInFlightIsNoNetError(t *testing.T) {
	_, c := newFlakyWith(t, []client.Option{client.WithMaxAttempts(1)}, problem(409, "idempotency_in_flight"))
	err := createProduct(c)
	var ne net.Error
	if errors.As(err, &ne) {
		t.Errorf("a 409 problem answer reads as a net.Error (%T, Timeout %v)", ne, ne.Timeout())
	}
	if _, ok := err.(net.Error); ok {
		t.Errorf("err.(net.Error) holds on a 409 problem answer")
	}
}

// A key with a newline is refused before anything is sent: the request
// was surely not done, and its key cannot be sent again.
func TestKeyedBadKeyCarriesNoKey(t *testing.T) {
	f, c := newFlaky(t, created)
	key := "abc\n"
	_, err := c.CreateProductWithResponse(context.Background(), &client.CreateProductParams{IdempotencyKey: &key}, client.ProductCreateRequest{Product: client.ProductCreateInput{Name: "Curso", FullAmountCents: 50000}})
	if err == nil {
		t.Fatal("no error")
	}
	if k := client.IdempotencyKeyOf(err); k != "" {
		t.Errorf("a request never sent (%d attempts) carries key %q: %v", f.count(), k, err)
	}
}

// A cut 201 is retried with the same key and the same body.
func TestKeyedCutRetrySameKeyAndBody(t *testing.T) {
	f, c := newFlaky(t, cutShort, created)
	if err := createProduct(c); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.received) != 2 || f.received[0].Header.Get("Idempotency-Key") != f.received[1].Header.Get("Idempotency-Key") || f.bodies[0] != f.bodies[1] || f.bodies[0] == "" {
		t.Errorf("attempts %d, keys %q %q, bodies %q %q", len(f.received), f.received[0].Header.Get("Idempotency-Key"), f.received[1].Header.Get("Idempotency-Key"), f.bodies[0], f.bodies[1])
	}
}
