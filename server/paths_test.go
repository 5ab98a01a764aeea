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

// An id written in upper case names what its lower-case form names: a
// UUID's hex digits are case-insensitive on input, and every such id was
// answered 404 (a path, a filter, a body's offer_id, product_id or
// payment_configuration_id) though the API calls it a UUID.
func TestIDsInUpperCaseNameTheSameThing(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		up := strings.ToUpper
		p := b.product()
		offer := b.call("POST", "/external_api/v1/offers", offerBody(up(p["id"].(string)))).want(t, 201).JSON(t)
		if offer["product"].(map[string]any)["id"] != p["id"] {
			t.Fatalf("offer's product %v, want %v", offer["product"], p["id"])
		}
		order := b.call("POST", "/external_api/v1/orders", orderBody(up(offer["id"].(string)))).want(t, 201).JSON(t)
		id := order["id"].(string)
		cfg := offer["payment_configurations"].([]any)[0].(map[string]any)["id"].(string)
		charged := b.call("POST", "/external_api/v1/orders/"+up(id)+"/charge", chargeBody(up(cfg), "pix", 1)).want(t, 200).JSON(t)
		if charged["id"] != id {
			t.Fatalf("charged %v, want %s", charged["id"], id)
		}
		if got := b.call("GET", "/external_api/v1/orders/"+up(id), nil).want(t, 200).JSON(t); got["id"] != id {
			t.Fatalf("GET order %v, want %s", got["id"], id)
		}
		bills := b.call("GET", "/external_api/v1/bills?order_id="+up(id), nil).want(t, 200).JSON(t)
		if bills["total_items"] != float64(1) {
			t.Fatalf("bills of the order: %v", bills["total_items"])
		}
		bill := bills["results"].([]any)[0].(map[string]any)["id"].(string)
		if got := b.call("GET", "/external_api/v1/bills/"+up(bill), nil).want(t, 200).JSON(t); got["id"] != bill {
			t.Fatalf("GET bill %v, want %s", got["id"], bill)
		}
	})
}
