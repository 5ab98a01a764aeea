package server_test

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Every length a request's text is refused past is the contract's
// maxLength for that field: a client that checks the contract is neither
// refused for a length it allows nor left to find one it does not state.
func TestTextLengthsAreTheContracts(t *testing.T) {
	t.Parallel()
	doc := loadContract(t).Doc()
	maxLength := func(t *testing.T, schema, property string) int {
		t.Helper()
		s := doc.Components.Schemas[schema].Value.Properties[property].Value
		if s.MaxLength == nil {
			t.Fatalf("%s.%s has no maxLength in the contract", schema, property)
		}
		return int(*s.MaxLength)
	}
	// Each field's value of n characters, valid but for its length where a
	// value can be (a phone spaced out, a URL's path drawn out).
	type field struct {
		schema, property, field string
		value                   func(n int) string
	}
	repeat := func(n int) string { return strings.Repeat("ç", n) }
	phone := func(n int) string { return "+55" + strings.Repeat(" ", n-18) + "(11) 98765-4321" }
	url := func(n int) string { return "https://example.com/" + strings.Repeat("a", n-20) }
	products := []field{
		{"ProductInput", "name", "product.name", repeat},
		{"ProductInput", "description", "product.description", repeat},
		{"ProductInput", "google_pixel_code", "product.google_pixel_code", repeat},
		{"ProductInput", "meta_pixel_code", "product.meta_pixel_code", repeat},
		{"ProductInput", "banner_url", "product.banner_url", url},
	}
	orders := []field{
		{"OrderInput", "customer_name", "order.customer_name", repeat},
		{"OrderInput", "phone", "order.phone", phone},
		{"AddressInput", "street", "order.address.street", repeat},
		{"AddressInput", "number", "order.address.number", repeat},
		{"AddressInput", "complement", "order.address.complement", repeat},
		{"AddressInput", "neighborhood", "order.address.neighborhood", repeat},
	}
	each(t, func(t *testing.T, b *bundle) {
		offerID := b.offer()["id"].(string)
		check := func(t *testing.T, f field, path string, body func(v string) map[string]any) {
			t.Helper()
			n := maxLength(t, f.schema, f.property)
			at, over := f.value(n), f.value(n+1)
			if utf8.RuneCountInString(at) != n {
				t.Fatalf("%s: the value at the limit has %d characters, not %d", f.field, utf8.RuneCountInString(at), n)
			}
			if r := b.call("POST", path, body(at)); r.Status != 201 {
				t.Errorf("%s of %d characters, the contract's maxLength: %d %s", f.field, n, r.Status, r.Body)
			}
			if got := fieldCodes(t, b.call("POST", path, body(over))); got[f.field] != "too_long" {
				t.Errorf("%s of %d characters, past the contract's maxLength: %v", f.field, n+1, got)
			}
		}
		for _, f := range products {
			t.Run(f.field, func(t *testing.T) {
				check(t, f, "/external_api/v1/products", func(v string) map[string]any {
					body := productBody()
					body["product"].(map[string]any)[f.property] = v
					return body
				})
			})
		}
		for _, f := range orders {
			t.Run(f.field, func(t *testing.T) {
				check(t, f, "/external_api/v1/orders", func(v string) map[string]any {
					body := orderBody(offerID)
					order := body["order"].(map[string]any)
					if f.schema == "AddressInput" {
						order = order["address"].(map[string]any)
					}
					order[f.property] = v
					return body
				})
			})
		}
	})
}
