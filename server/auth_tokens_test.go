package server_test

import (
	"context"
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

// Every way of sending a token that is not one live token of this
// listener's environment, in a header of its own, is refused with 401 (and
// is never a 200 for someone). A revoked token stops working, at once
// without a cache and within its TTL with one.
func TestTokensRefused(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{0, 200 * time.Millisecond} {
		t.Run(ttl.String(), func(t *testing.T) {
			t.Parallel()
			b := setup(t, sqldb.SQLite)
			srv := httptest.NewServer(server.New(server.ServicesOf(b.app, b.db), server.Config{Environment: parcela.Sandbox, Clock: b.clock,
				PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec, TokenCacheTTL: ttl, UnauthenticatedRateLimit: 1000}))
			t.Cleanup(srv.Close)
			url := srv.URL + "/external_api/v1/products"
			doomed := sqldbtest.Token(t, b.db, b.company.ID, parcela.Sandbox)
			for auth, want := range map[string]int{
				"Bearer " + b.token:                  200,
				"bearer " + b.token:                  200,
				"Bearer " + b.token + " ":            200,
				"Bearer " + doomed:                   200,
				"":                                   401,
				b.token:                              401,
				"Basic " + b.token:                   401,
				"Token " + b.token:                   401,
				"Bearer " + b.token + "x":            401,
				"Bearer " + b.token[:len(b.token)-1]: 401,
				"Bearer " + b.token + " " + b.token:  401,
				"Bearer " + b.prodToken:              401,
				"Bearer sandbox_":                    401,
			} {
				if status, _, body := get(t, http.DefaultClient, url, auth, ""); status != want {
					t.Errorf("Authorization %q: %d, want %d: %s", auth, status, want, body)
				}
			}
			// A token in the query string is no token.
			if status, _, _ := get(t, http.DefaultClient, url+"?access_token="+b.token, "", ""); status != 401 {
				t.Errorf("a token in the query: %d", status)
			}
			toks, err := b.db.Tokens(context.Background(), b.company.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, tok := range toks {
				if tok.Hash == doomed || tok.Prefix == doomed || len(tok.Prefix) > len(tok.Environment)+1+6 {
					t.Fatalf("a token stored in the clear: %+v", tok)
				}
				if tok.Hash == parcela.HashToken(doomed) {
					if err := b.db.RevokeToken(context.Background(), tok.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
			time.Sleep(ttl + 10*time.Millisecond)
			if status, _, body := get(t, http.DefaultClient, url, "Bearer "+doomed, ""); status != 401 {
				t.Errorf("a revoked token, past the cache's %s: %d %s", ttl, status, body)
			}
		})
	}
}

// One Idempotency-Key sent by two companies, or by one company in both
// environments, is three keys: none is answered with another's stored
// response (which would show it another company's product), nor refused as
// reused with a different request.
func TestIdempotencyKeysAreTheCompanys(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		key := map[string]string{"Idempotency-Key": "shared-" + sqldbtest.Suffix()}
		ids := map[string]bool{}
		for i, call := range [][2]string{{b.sandbox.URL, b.token}, {b.sandbox.URL, b.otherToken}, {b.production.URL, b.prodToken}} {
			body := productBody()
			if i == 1 {
				body["product"].(map[string]any)["name"] = "Outro curso"
			}
			for range 2 {
				r := b.send(call[0], call[1], "POST", "/external_api/v1/products", body, key).want(t, 201)
				ids[r.JSON(t)["id"].(string)] = true
			}
		}
		if len(ids) != 3 {
			t.Fatalf("three companies' or environments' requests under one key made %d products", len(ids))
		}
	})
}
