package server_test

import (
	"strings"
	"testing"

	"parcela/sqldb/sqldbtest"
)

// An Idempotency-Key sent empty (or blank, trimmed to empty) is refused:
// read as no key, a client whose key variable was unset believed its
// retries safe while each made another order (an audit).
func TestEmptyIdempotencyKeyIsRefused(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer := b.offer()
		for _, sent := range []string{"", "   "} {
			r := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/orders", orderBody(offer["id"].(string)), map[string]string{"Idempotency-Key": sent})
			if got := fieldCodes(t, r.want(t, 422)); got["Idempotency-Key"] != "invalid" {
				t.Errorf("Idempotency-Key %q: %v", sent, got)
			}
		}
	})
}

// A retry naming the id in other letters is the same request: the id is
// read in lower case, and the key's hash read the path as sent, so the
// retry was refused as another request with the key (an audit).
func TestIdempotentRetryWithTheIdInOtherLetters(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		id := b.product()["id"].(string)
		key := map[string]string{"Idempotency-Key": "case-" + sqldbtest.Suffix()}
		body := map[string]any{"product": map[string]any{"name": "Novo nome"}}
		b.send(b.sandbox.URL, b.token, "PATCH", "/external_api/v1/products/"+strings.ToUpper(id), body, key).want(t, 200)
		again := b.send(b.sandbox.URL, b.token, "PATCH", "/external_api/v1/products/"+id, body, key).want(t, 200)
		if again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("the retry in lower case was not replayed: %s", again.Body)
		}
	})
}
