package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// Every API answer is what its Content-Type says and is kept by no cache:
// an order carries its customer's CPF, email and phone, and answers had
// neither header.
func TestAPIAnswersAreNotCachedNorSniffed(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, order := b.order()
		for _, r := range []resp{
			b.call("GET", "/external_api/v1/orders/"+order["id"].(string), nil).want(t, 200),
			b.call("GET", "/external_api/v1/orders/0195a3f0-0000-7000-8000-000000000000", nil).want(t, 404),
			b.send(b.sandbox.URL, "", "GET", "/external_api/v1/bills", nil, nil).want(t, 401),
		} {
			if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%d: Cache-Control %q, want no-store", r.Status, cc)
			}
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%d: X-Content-Type-Options %q, want nosniff", r.Status, got)
			}
		}
	})
}

// Two Authorization headers are no credential, whichever comes first: the
// first was taken, where a proxy in front may have checked or logged the
// other.
func TestTwoAuthorizationHeadersAreRefused(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for _, tokens := range [][]string{{b.token, b.otherToken}, {b.token, b.token}, {b.token, ""}} {
			req, err := http.NewRequest("GET", b.sandbox.URL+"/external_api/v1/bills", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tok := range tokens {
				req.Header.Add("Authorization", strings.TrimSpace("Bearer "+tok))
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("two Authorization headers: %d, want 401", res.StatusCode)
			}
		}
	})
}
