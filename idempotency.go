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
	// Unanswered marks the key of a PATCH or a DELETE whose write
	// committed (with its claim on the key) but whose answer was never
	// stored: its process ended between the two, or the answer failed
	// (a 5xx, its client gone, a read back that collided). Status and
	// Body are empty. A retry must not run the write again, which would
	// apply its values over any change made since: it is answered with
	// the entity as it stands (a DELETE's 204).
	Unanswered bool
	// ReadBack marks, when stored, the answer read back for an unanswered
	// key's retry: the only store that replaces the unanswered record. Any
	// other, a second run of the same request included, is refused by it.
	ReadBack bool
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
	// AfterCommit marks a request whose answer is known only after its
	// write commits (a PATCH or a DELETE answers with the entity as stored
	// then): that write claims the key instead, and the front door stores
	// the answer over the claim. A duplicate of it running meanwhile, on
	// another instance, finds the key claimed and is told the first is in
	// flight; unclaimed, it ran too and its answer (a DELETE's 404) could
	// be stored before the first's.
	AfterCommit bool

	mu        sync.Mutex
	committed *IdempotentResponse
	claim     string
}

// Committed records the response stored with the request's writes; the
// store calls it once they committed.
func (r *IdempotentRequest) Committed(resp IdempotentResponse) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.committed = &resp
}

// Claimed records the token of the claim on the key that committed with
// the request's write (AfterCommit); the store calls it once it committed.
func (r *IdempotentRequest) Claimed(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claim = token
}

// Claim is the token of the request's committed claim on its key, "" when
// none committed.
func (r *IdempotentRequest) Claim() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.claim
}

// Stored is the response that committed with the request's writes, nil
// when none did (nothing was written, or nothing committed).
func (r *IdempotentRequest) Stored() *IdempotentResponse {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.committed
}

// ErrIdempotencyKeyTaken is the store's report that another request stored
// its response under the key first, or claimed it and is still storing
// its response: nothing of this request was kept, and the front door
// answers with the stored response instead, or that the first is in
// flight.
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

// withoutIdempotentRequest returns ctx without the idempotent request it
// carries, for a write a use case makes after the one that completed the
// request or claimed its key (the boleto a waiver issues): that write
// would find the key taken, by the request itself, and fail.
func withoutIdempotentRequest(ctx context.Context) context.Context {
	if IdempotentRequestOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, idempotentRequestKey{}, (*IdempotentRequest)(nil))
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

// IdempotentClaim is for the store, before it commits a write: the
// AfterCommit request whose key that write claims, nil when none. Every
// write of such a request claims: the PATCH and DELETE use cases commit
// one write each (the others of their rounds conflicted, and rolled back),
// but for a waiver's boleto, issued without the request after the waiver
// claimed its key (withoutIdempotentRequest).
func IdempotentClaim(ctx context.Context) *IdempotentRequest {
	if _, ok := ctx.Value(answerKey{}).(answer); ok {
		return nil
	}
	if r := IdempotentRequestOf(ctx); r != nil && r.AfterCommit {
		return r
	}
	return nil
}

// PricedBill is a bill with the company whose rates price its penalties,
// as the bill use cases answer.
type PricedBill struct {
	Bill    *Bill
	Company *Company
}
