package parcela

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// IdempotentResponse is a response stored under an Idempotency-Key, to be
// replayed to a retry of the same request.
type IdempotentResponse struct {
	// RequestHash identifies the request (method, path and body) that
	// stored it; the same key with another request is refused.
	RequestHash string
	Status      int
	Body        []byte
}

// IdempotentRequest is a request sent with an Idempotency-Key. The front
// door puts it in the request's context with Render; the use case hands its
// result to the write that completes it (answering); the store renders the
// response in that write's transaction and stores it there, so the
// request's changes and the response a retry replays commit together or
// not at all.
type IdempotentRequest struct {
	Auth        Auth
	Key         string
	RequestHash string
	// Render turns the use case's result into the response to store; the
	// front door sets it before calling the use case. The store calls it
	// inside the transaction, so it must not touch the store.
	Render func(result any) (status int, body []byte, err error)

	mu        sync.Mutex
	committed *IdempotentResponse
}

// Committed records the response stored with the request's writes; the
// store calls it once they committed.
func (r *IdempotentRequest) Committed(resp IdempotentResponse) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.committed = &resp
}

// Stored is the response that committed with the request's writes, nil
// when none did (nothing was written, or nothing committed).
func (r *IdempotentRequest) Stored() *IdempotentResponse {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.committed
}

// ErrIdempotencyKeyTaken is the store's report that another request stored
// its response under the key first: nothing of this request was kept, and
// the front door answers with the stored response instead.
var ErrIdempotencyKeyTaken = errors.New("the idempotency key was stored by another request")

type (
	idempotentRequestKey struct{}
	answerKey            struct{}
)

// answer is a use case's result, carried to the write that completes it.
type answer struct{ result any }

// WithIdempotentRequest returns ctx carrying r.
func WithIdempotentRequest(ctx context.Context, r *IdempotentRequest) context.Context {
	return context.WithValue(ctx, idempotentRequestKey{}, r)
}

// IdempotentRequestOf is the idempotent request ctx carries, or nil.
func IdempotentRequestOf(ctx context.Context) *IdempotentRequest {
	r, _ := ctx.Value(idempotentRequestKey{}).(*IdempotentRequest)
	return r
}

// answering returns the context for the write that completes a use case
// whose result is result. Only that write gets it: the use case's other
// writes (a boleto number, a conflicting attempt) store no response.
func answering(ctx context.Context, result any) context.Context {
	if IdempotentRequestOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, answerKey{}, answer{result})
}

// IdempotentAnswer is for the store, before it commits a write: the
// idempotent request that write completes, and its response rendered from
// the use case's result. It returns nil when the write completes none.
func IdempotentAnswer(ctx context.Context) (*IdempotentRequest, *IdempotentResponse, error) {
	a, ok := ctx.Value(answerKey{}).(answer)
	r := IdempotentRequestOf(ctx)
	if !ok || r == nil || r.Render == nil {
		return nil, nil, nil
	}
	status, body, err := r.Render(a.result)
	if err != nil {
		return nil, nil, fmt.Errorf("render the idempotent response: %w", err)
	}
	return r, &IdempotentResponse{RequestHash: r.RequestHash, Status: status, Body: body}, nil
}

// PricedBill is a bill with the company whose rates price its penalties,
// as the bill use cases answer.
type PricedBill struct {
	Bill    *Bill
	Company *Company
}
