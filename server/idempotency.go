package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"parcela"
)

// IdempotencyStore keeps the responses stored under Idempotency-Keys. The
// response of a request that writes is stored by the store itself, in the
// transaction of the request's writes (parcela.IdempotentRequest).
type IdempotencyStore interface {
	// IdempotentResponse is the response stored under key in the last 24
	// hours, or nil; parcela.ErrIdempotencyKeyTaken when a PATCH's or a
	// DELETE's write claimed the key and its answer is still to come.
	IdempotentResponse(ctx context.Context, a parcela.Auth, key string) (*parcela.IdempotentResponse, error)
	// StoreIdempotentResponse stores the response of a request that
	// committed no write, or a PATCH's or a DELETE's over the claim its
	// write committed (the request in ctx); if another request stored one
	// under key first, that one is kept and returned, and if another
	// claimed it, nothing is stored and the error is
	// parcela.ErrIdempotencyKeyTaken.
	StoreIdempotentResponse(ctx context.Context, a parcela.Auth, key string, resp parcela.IdempotentResponse) (*parcela.IdempotentResponse, error)
}

// inFlight holds the keys whose first request is running in this process,
// so a concurrent retry is told 409 instead of running it twice. Across
// instances the store's unique key decides: the second to commit is rolled
// back and answered with the first's response.
type inFlight struct {
	mu   sync.Mutex
	keys map[inFlightKey]struct{}
}

type inFlightKey struct {
	company string
	env     parcela.Environment
	key     string
}

func (f *inFlight) claim(k inFlightKey) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.keys[k]; ok {
		return false
	}
	if f.keys == nil {
		f.keys = map[inFlightKey]struct{}{}
	}
	f.keys[k] = struct{}{}
	return true
}

func (f *inFlight) release(k inFlightKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.keys, k)
}

// idempotent runs a POST sent with an Idempotency-Key: a stored response of
// the same request is replayed byte for byte; otherwise the request runs
// with a parcela.IdempotentRequest in its context, and the response its
// writes committed with is the one written. A request that wrote nothing
// has its response stored on its own, unless it failed (5xx), lost to
// concurrent requests (409 conflict) or its client left: then nothing is
// kept and a retry runs for real.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, h, get apiFunc, body []byte, key string) {
	// The answer leaves only after the key is released: a client that
	// retries the moment it has the answer must find the stored response,
	// not a request still in flight.
	held := &heldResponse{ResponseWriter: w}
	defer held.send()
	w = held
	a := authOf(r)
	sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
	hash := hex.EncodeToString(sum[:])
	k := inFlightKey{a.CompanyID, a.Environment, key}
	if !s.inFlight.claim(k) {
		writeError(w, r, inFlightErr(key))
		return
	}
	defer s.inFlight.release(k)

	stored, err := s.svc.Idempotency.IdempotentResponse(r.Context(), a, key)
	switch {
	case keyTaken(err): // claimed on another instance, its answer to come
		writeError(w, r, inFlightErr(key))
		return
	case err != nil:
		writeError(w, r, err)
		return
	case stored != nil:
		s.answerStored(w, r, get, key, hash, stored)
		return
	}
	// A PATCH or a DELETE answers with the entity as stored after its
	// write: its write claims the key, and its answer is stored after.
	after := r.Method == http.MethodPatch || r.Method == http.MethodDelete
	req := &parcela.IdempotentRequest{Auth: a, Key: key, RequestHash: hash, AfterCommit: after}
	r = r.WithContext(parcela.WithIdempotentRequest(r.Context(), req))
	status, v, err := h(r, body)
	if committed := req.Stored(); committed != nil {
		writeRaw(w, committed.Status, committed.Body)
		return
	}
	if keyTaken(err) {
		s.takenByAnother(w, r, get, key, hash)
		return
	}
	status, out := render(r, status, v, err)
	// A conflict (concurrent requests kept moving what it needed) did
	// nothing and asks for a retry, which must then run, not replay it. A
	// write that committed its claim has its answer stored though its
	// client left (a retry gets it), and a 5xx of its leaves the claim
	// unanswered instead (a retry reads the entity back).
	claimed := req.Claim() != ""
	if !claimed && (status >= 500 || parcela.ErrorCode(err) == parcela.ECONFLICT || r.Context().Err() != nil) {
		writeRaw(w, status, out)
		return
	}
	ctx, cancel := detached(r)
	defer cancel()
	if claimed && (status == StatusClientClosed || parcela.ErrorCode(err) == parcela.ECONFLICT) {
		// The write committed with its claim, but its answer (the entity
		// read back after it) failed because the client left: a 499 with
		// no body is no answer to replay for 24 hours. Nor is a 409
		// conflict (the read back still colliding in the database after
		// its retries), which says nothing was done: replayed, it told
		// every retry so of a write that took effect. The claim is
		// left unanswered as a 5xx's is, and a retry is answered with the
		// entity as it stands (TestIdempotentPatchWhoseClientLeftAfterItsCommitIsAnsweredOnRetry,
		// TestIdempotentPatchWhoseReadBackCollidedIsAnsweredOnRetry).
		unanswered := parcela.IdempotentResponse{RequestHash: hash, Status: http.StatusInternalServerError}
		if _, err := s.svc.Idempotency.StoreIdempotentResponse(ctx, a, key, unanswered); err != nil && !keyTaken(err) {
			logger(r).Error("leave idempotency claim unanswered", "error", err.Error())
		}
		writeRaw(w, status, out)
		return
	}
	s.storeAnswer(ctx, w, r, get, key, hash, status, out, false)
}

// storeAnswer stores a request's answer under its key and writes it, or
// the answer another request stored first; readBack marks the answer read
// back for an unanswered key, the only one that replaces it.
func (s *Server) storeAnswer(ctx context.Context, w http.ResponseWriter, r *http.Request, get apiFunc, key, hash string, status int, out []byte, readBack bool) {
	first, err := s.svc.Idempotency.StoreIdempotentResponse(ctx, authOf(r), key, parcela.IdempotentResponse{RequestHash: hash, Status: status, Body: out, ReadBack: readBack})
	switch {
	case keyTaken(err):
		// Another request (on another instance) claimed the key with its
		// write, and its answer is still to come: this one, which wrote
		// nothing, ran on what that write left (a DELETE's 404).
		writeError(w, r, inFlightErr(key))
		return
	case err != nil:
		logger(r).Error("store idempotent response", "error", err.Error())
	case first != nil && first.Unanswered && first.RequestHash == hash && readBack:
		// Still unanswered after the read back's store, which replaces
		// it: not read back again here, which could go round.
		writeError(w, r, inFlightErr(key))
		return
	case first != nil:
		s.answerStored(w, r, get, key, hash, first)
		return
	}
	writeRaw(w, status, out)
}

// answerStored answers a request with what is stored under its key: the
// stored response, or the entity as it stands when the key's write
// committed unanswered.
func (s *Server) answerStored(w http.ResponseWriter, r *http.Request, get apiFunc, key, hash string, stored *parcela.IdempotentResponse) {
	if stored.Unanswered && stored.RequestHash == hash {
		s.answerUnanswered(w, r, get, key, hash)
		return
	}
	replay(w, r, key, hash, stored)
}

// answerUnanswered answers the retry of a PATCH or a DELETE whose write
// committed but whose answer was never stored: its process ended between
// the two, or the answer failed (a 5xx, its client gone, a read back that
// collided). Run again, the write applied its values over any change made
// since (another request's PATCH of the same entity), and a DELETE's retry
// was answered 404: the retry is answered instead with the entity as its
// GET reads it now (a DELETE's 204, as its write did delete), and that
// answer is stored under the key for the retries after it; an entity
// deleted since is answered 404, not stored
// (TestIdempotentPatchCommittedUnansweredIsNotAppliedAgain).
func (s *Server) answerUnanswered(w http.ResponseWriter, r *http.Request, get apiFunc, key, hash string) {
	status, out := http.StatusNoContent, []byte(nil)
	if r.Method != http.MethodDelete {
		if get == nil {
			writeError(w, r, fmt.Errorf("%s has no read back for an unanswered key", r.Pattern))
			return
		}
		// Only the entity is stored: a 404 (deleted since) or a 5xx is
		// answered as it stands now, and the next retry reads again.
		st, v, err := get(r, nil)
		if status, out = render(r, st, v, err); status/100 != 2 || r.Context().Err() != nil {
			writeRaw(w, status, out)
			return
		}
	}
	ctx, cancel := detached(r)
	defer cancel()
	s.storeAnswer(ctx, w, r, get, key, hash, status, out, true)
}

// heldResponse keeps a response's status and body until send; headers go
// straight to the real writer's map, which nothing reads before send.
type heldResponse struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (h *heldResponse) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return h.body.Write(b)
}

func (h *heldResponse) send() {
	if h.status == 0 {
		return
	}
	h.ResponseWriter.WriteHeader(h.status)
	h.ResponseWriter.Write(h.body.Bytes())
}

// takenByAnother answers a request whose commit found its key stored or
// claimed by another request (on another instance) meanwhile.
func (s *Server) takenByAnother(w http.ResponseWriter, r *http.Request, get apiFunc, key, hash string) {
	stored, err := s.svc.Idempotency.IdempotentResponse(r.Context(), authOf(r), key)
	switch {
	case keyTaken(err): // claimed, its answer still to come
		writeError(w, r, inFlightErr(key))
	case err != nil:
		writeError(w, r, err)
	case stored == nil: // expired in between: the client's retry runs afresh
		writeError(w, r, inFlightErr(key))
	default:
		s.answerStored(w, r, get, key, hash, stored)
	}
}

func inFlightErr(key string) error {
	return parcela.Errorf(parcela.EIDEMPOTENTFLIGHT, "a request with Idempotency-Key %q is still being processed; retry shortly", key)
}

// replay writes the stored response of the same request, or 422 when the
// key came with another request.
func replay(w http.ResponseWriter, r *http.Request, key, hash string, stored *parcela.IdempotentResponse) {
	if stored.RequestHash != hash {
		writeError(w, r, parcela.Errorf(parcela.EIDEMPOTENTREUSED, "Idempotency-Key %q was already used with a different request", key))
		return
	}
	w.Header().Set("Idempotent-Replayed", "true")
	writeRaw(w, stored.Status, stored.Body)
}

// answer runs a use case whose result the API renders as form with status.
// With an Idempotency-Key, the same rendering is what the store commits
// with the use case's writes, so the first answer and its replays are the
// same bytes.
func answer[T any](r *http.Request, status int, form func(T) any, run func() (T, error)) (int, any, error) {
	if req := parcela.IdempotentRequestOf(r.Context()); req != nil {
		req.Render = func(result any) (int, []byte, error) {
			v, ok := result.(T)
			if !ok {
				return 0, nil, fmt.Errorf("the use case answered %T, not %T", result, v)
			}
			body, err := marshal(form(v))
			return status, body, err
		}
	}
	v, err := run()
	if err != nil {
		return 0, nil, err
	}
	return status, form(v), nil
}

// keyTaken tells whether err is the store's report that another request
// committed the idempotency key first.
func keyTaken(err error) bool { return errors.Is(err, parcela.ErrIdempotencyKeyTaken) }
