package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"parcela/sqldb"
)

// A path Go's ServeMux would clean (a doubled slash, a dot segment) is no
// route of the API: it is answered the API's 404 problem, where the mux
// redirected it 307 to the cleaned path, and a client following the
// redirect sent its POST again to a path it never named.
func TestUncleanPathsAreNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t, sqldb.SQLite)
	for _, c := range []struct{ method, path string }{
		{"POST", "//external_api/v1/orders"},
		{"GET", "//external_api/v1/bills"},
		{"GET", "/external_api/v1//bills"},
		{"GET", "/external_api/v1/./bills"},
		{"POST", "/external_api/v1/x/../orders"},
		{"GET", "//readyz"},
		{"GET", "//docs"},
	} {
		req, err := http.NewRequest(c.method, b.sandbox.URL+c.path, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+b.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultTransport.RoundTrip(req) // no redirect followed
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 404 || res.Header.Get("Location") != "" || res.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s %s: %d Location %q %s", c.method, c.path, res.StatusCode, res.Header.Get("Location"), body)
			continue
		}
		if err := b.contract.ValidateSchema("Problem", body); err != nil {
			t.Errorf("%s %s: %v", c.method, c.path, err)
		}
		if p := (resp{Body: body}).JSON(t); p["code"] != "not_found" || p["request_id"] != res.Header.Get("X-Request-Id") {
			t.Errorf("%s %s: %s", c.method, c.path, body)
		}
	}
}
