package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"parcela/client"
)

// A redirect from the API's address is no answer of the API's (it answers
// none) and is not followed: net/http keeps Authorization on a redirect to
// the same host name, so a proxy's 307 to another port (or to plain http)
// got the token, and a POST's body, where the caller never sent them. The
// call fails naming the redirect; a client given WithHTTP is not changed.
func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.Header.Get("Authorization") != "" {
			t.Errorf("%s %s reached another port with the token", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"results":[],"total_count":0,"page":1,"per_page":25}`))
	}))
	t.Cleanup(elsewhere.Close)
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+r.URL.Path, status)
		}))
		t.Cleanup(api.Close)
		own := &http.Client{}
		for name, opts := range map[string][]client.Option{"default": nil, "WithHTTP": {client.WithHTTP(own)}} {
			c, err := client.New(api.URL, "sandbox_secret", opts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ListProductsWithResponse(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "redirect") {
				t.Errorf("%s, %d on a GET: %v", name, status, err)
			}
			body := client.CreateProductJSONRequestBody{}
			if _, err := c.CreateProductWithResponse(context.Background(), nil, body); err == nil || !strings.Contains(err.Error(), "redirect") {
				t.Errorf("%s, %d on a POST: %v", name, status, err)
			}
		}
		if own.CheckRedirect != nil {
			t.Errorf("WithHTTP's client was changed")
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d requests followed a redirect to another port", n)
	}
}
