package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"parcela"
)

// noStoredResponses is an idempotency store with nothing stored that keeps
// nothing: the request's own answer is what is written.
type noStoredResponses struct{}

func (noStoredResponses) IdempotentResponse(context.Context, parcela.Auth, string) (*parcela.IdempotentResponse, error) {
	return nil, nil
}

func (noStoredResponses) StoreIdempotentResponse(context.Context, parcela.Auth, string, parcela.IdempotentResponse) (*parcela.IdempotentResponse, error) {
	return nil, nil
}

// claimCheckingWriter records, when the answer's status is written,
// whether the request's key was still claimed.
type claimCheckingWriter struct {
	*httptest.ResponseRecorder
	flight       *inFlight
	key          inFlightKey
	stillClaimed bool
}

func (w *claimCheckingWriter) WriteHeader(status int) {
	if w.flight.claim(w.key) {
		w.flight.release(w.key)
	} else {
		w.stillClaimed = true
	}
	w.ResponseRecorder.WriteHeader(status)
}

// A client retries the moment it has the answer; the key must be free by
// then, or the retry is told 409 idempotency_in_flight for a request that
// has ended.
func TestIdempotentKeyReleasedBeforeTheAnswer(t *testing.T) {
	t.Parallel()
	s := &Server{svc: Services{Idempotency: noStoredResponses{}}}
	a := parcela.Auth{CompanyID: "c1", Environment: parcela.Sandbox}
	r := httptest.NewRequest("POST", "/external_api/v1/orders", nil)
	r = r.WithContext(context.WithValue(r.Context(), authKey{}, a))
	w := &claimCheckingWriter{ResponseRecorder: httptest.NewRecorder(), flight: &s.inFlight, key: inFlightKey{a.CompanyID, a.Environment, "k1"}}
	s.idempotent(w, r, func(*http.Request, []byte) (int, any, error) {
		return http.StatusCreated, map[string]string{"id": "o1"}, nil
	}, nil, []byte(`{}`), "k1")
	if w.Code != http.StatusCreated || w.Body.String() != `{"id":"o1"}` {
		t.Fatalf("answered %d %s", w.Code, w.Body)
	}
	if w.stillClaimed {
		t.Fatal("the answer left while its key was still claimed")
	}
}
