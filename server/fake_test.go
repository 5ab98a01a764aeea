package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"parcela"
	"parcela/server"
)

// tokensFake knows one sandbox token.
type tokensFake struct{}

func (tokensFake) Authenticate(_ context.Context, plain string) (*parcela.Token, error) {
	if plain != "sandbox_fake" {
		return nil, parcela.Errorf(parcela.EUNAUTHORIZED, "invalid access token")
	}
	return &parcela.Token{ID: "token", CompanyID: "company", Environment: parcela.Sandbox}, nil
}

// ordersFake answers every order read with err, and records the caller.
type ordersFake struct {
	parcela.OrderService
	err    error
	caller parcela.Auth
}

func (f *ordersFake) Order(_ context.Context, a parcela.Auth, _ string) (*parcela.Order, error) {
	f.caller = a
	return nil, f.err
}

// Handlers need only the use cases' interfaces: these run on fakes, with no
// store behind them, and a failure of a use case is a problem document that
// says nothing of its internals.
func TestHandlersOnFakes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
	}{
		{"not found", parcela.NotFound("order"), 404, parcela.ENOTFOUND},
		{"invalid state", parcela.Errorf(parcela.EINVALIDSTATE, "no"), 409, parcela.EINVALIDSTATE},
		{"a failure inside", errors.New("read order: connection reset by 10.0.0.7"), 500, parcela.EINTERNAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orders := &ordersFake{err: tt.err}
			srv := httptest.NewServer(server.New(server.Services{Tokens: tokensFake{}, Orders: orders}, server.Config{Environment: parcela.Sandbox}))
			defer srv.Close()
			req, _ := http.NewRequest("GET", srv.URL+"/external_api/v1/orders/0195a3f0-0000-7000-8000-0000000000a1", nil)
			req.Header.Set("Authorization", "Bearer sandbox_fake")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var p server.Problem
			if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tt.wantStatus || p.Code != tt.wantCode || strings.Contains(p.Detail, "10.0.0.7") {
				t.Fatalf("%d %+v", res.StatusCode, p)
			}
			if orders.caller != (parcela.Auth{CompanyID: "company", Environment: parcela.Sandbox, TokenID: "token"}) {
				t.Fatalf("the use case ran as %+v", orders.caller)
			}
		})
	}
}
