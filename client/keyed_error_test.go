package client_test

import (
	"errors"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"parcela/client"
)

// A POST's problem answer is a *Problem itself, as the README says: the
// key's wrapper (IdempotencyKeyOf) is only on errors whose outcome is
// unknown, and a type assertion on a 422 failed with it (a review).
func TestPostProblemIsAProblem(t *testing.T) {
	_, c := newFlaky(t, problem(422, "validation_failed"))
	err := createProduct(c)
	if _, ok := err.(*client.Problem); !ok {
		t.Errorf("a POST's 422 is %T, not *client.Problem (README: every 4xx/5xx answer is a *client.Problem)", err)
	}
}

// A POST that timed out is a timeout to the caller's usual checks, which
// do not unwrap, and carries its key.
func TestPostTimeoutIsATimeout(t *testing.T) {
	slow := func(w http.ResponseWriter) { time.Sleep(300 * time.Millisecond); created(w) }
	_, c := newFlakyWith(t, []client.Option{client.WithHTTP(&http.Client{Timeout: 50 * time.Millisecond}), client.WithMaxAttempts(1)}, slow)
	err := createProduct(c)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("not a timeout at all: %T %v", err, err)
	}
	if _, ok := err.(net.Error); !ok {
		t.Errorf("err.(net.Error) fails on %T", err)
	}
	if !os.IsTimeout(err) {
		t.Errorf("os.IsTimeout false on %T %v", err, err)
	}
	if client.IdempotencyKeyOf(err) == "" {
		t.Errorf("a POST that timed out carries no key: %v", err)
	}
}
