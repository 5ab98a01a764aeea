package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// Every route that takes an id answers another company's id, and the other
// environment's, with the 404 of a missing one, and a listing filtered by
// one shows nothing of it: a table over the whole of routes.go, where
// TestIsolation reads a few entities.
func TestEveryRouteIsolated(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		hook := b.hook(t, "https://hooks.example.com/x", "bill", "pending", "paid")
		offer, order := b.order()
		_, fin := configs(offer)
		oid := order["id"].(string)
		charged := b.call("POST", "/external_api/v1/orders/"+oid+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
		billing := charged["billings"].([]any)[0].(map[string]any)["id"].(string)
		bill := billIDs(charged)[0]
		payment := openPayment(t, b.bill(t, bill))["id"].(string)
		deliveries := b.call("GET", "/external_api/v1/webhook_deliveries", nil).want(t, 200).JSON(t)["results"].([]any)
		if len(deliveries) == 0 {
			t.Fatal("no delivery to try")
		}
		delivery := deliveries[0].(map[string]any)["id"].(string)
		product := offer["product"].(map[string]any)["id"].(string)
		const v1 = "/external_api/v1"
		routes := []struct {
			method, path string
			body         any
		}{
			{"GET", v1 + "/products/" + product, nil},
			{"PATCH", v1 + "/products/" + product, map[string]any{"product": map[string]any{"name": "x"}}},
			{"GET", v1 + "/offers/" + offer["id"].(string), nil},
			{"PATCH", v1 + "/offers/" + offer["id"].(string), map[string]any{"offer": map[string]any{"name": "x"}}},
			{"GET", v1 + "/orders/" + oid, nil},
			{"POST", v1 + "/orders/" + oid + "/cancel", nil},
			{"POST", v1 + "/orders/" + oid + "/charge", chargeBody(fin, "pix", 3)},
			{"GET", v1 + "/billings/" + billing, nil},
			{"POST", v1 + "/billings/" + billing + "/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}},
			{"GET", v1 + "/bills/" + bill, nil},
			{"PATCH", v1 + "/bills/" + bill, map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-02-01T23:59:59-03:00"}}},
			{"GET", v1 + "/webhooks/" + hook["id"].(string), nil},
			{"PATCH", v1 + "/webhooks/" + hook["id"].(string), map[string]any{"name": "x"}},
			{"DELETE", v1 + "/webhooks/" + hook["id"].(string), nil},
			{"POST", v1 + "/webhooks/" + hook["id"].(string) + "/rotate_secret", nil},
			{"GET", v1 + "/webhook_deliveries?webhook_id=" + hook["id"].(string), nil},
			{"GET", v1 + "/webhook_deliveries/" + delivery, nil},
			{"POST", v1 + "/webhook_deliveries/" + delivery + "/retry", nil},
			{"POST", v1 + "/sandbox/payments/" + payment + "/pay", nil},
			{"POST", v1 + "/sandbox/payments/" + payment + "/expire", nil},
		}
		for _, rt := range routes {
			for name, call := range map[string][2]string{
				"other company":     {b.sandbox.URL, b.otherToken},
				"other environment": {b.production.URL, b.prodToken},
			} {
				r := b.send(call[0], call[1], rt.method, rt.path, rt.body, nil)
				if r.Status != http.StatusNotFound {
					t.Errorf("%s: %s %s = %d, want 404: %s", name, rt.method, rt.path, r.Status, r.Body)
				}
			}
		}
		// The payment images are public (found by the payment's id alone),
		// but each listener serves its own environment's.
		for _, kind := range []string{"barcode.png", "pix.png"} {
			b.send(b.production.URL, "", "GET", v1+"/payments/"+payment+"/"+kind, nil, nil).want(t, 404)
		}
		// The owner still sees everything as it was: nothing above wrote.
		b.call("GET", v1+"/webhooks/"+hook["id"].(string), nil).want(t, 200)
		if got := b.call("GET", v1+"/webhook_deliveries/"+delivery, nil).want(t, 200).JSON(t); got["id"] != delivery || got["attempts_total"] != float64(len(got["attempts"].([]any))) {
			t.Fatalf("the delivery read by its owner: %v", got)
		}
		if got := b.call("GET", v1+"/orders/"+oid, nil).want(t, 200).JSON(t)["status"]; got == "canceled" {
			t.Fatalf("order canceled by a stranger")
		}
		// Listings filtered by a stranger's id match nothing.
		for _, path := range []string{"/bills?order_id=" + oid, "/bills?billing_id=" + billing, "/bills", "/webhooks", "/webhook_deliveries", "/products", "/offers"} {
			for name, call := range map[string][2]string{
				"other company":     {b.sandbox.URL, b.otherToken},
				"other environment": {b.production.URL, b.prodToken},
			} {
				r := b.send(call[0], call[1], "GET", v1+path, nil, nil).want(t, 200)
				for _, id := range []string{oid, billing, bill, payment, hook["id"].(string), delivery, product} {
					if strings.Contains(string(r.Body), id) {
						t.Errorf("%s: GET %s shows %s: %s", name, path, id, r.Body)
					}
				}
			}
		}
	})
}
