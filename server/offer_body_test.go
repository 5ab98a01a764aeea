package server_test

import "testing"

// The contract lists the fields offer carries without exclude_from_campaign,
// so a client may send it beside offer, as it sends payment_configurations:
// it was ignored there, and the offer stored as not excluded under a 201.
// payment_configurations sent inside offer were ignored, and the top-level
// ones, or a "required" on them, stood without a word on why.
func TestOfferBodyFieldsBesideOffer(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		p := b.product()
		body := offerBody(p["id"].(string))
		body["exclude_from_campaign"] = true
		o := b.call("POST", "/external_api/v1/offers", body).want(t, 201).JSON(t)
		if o["exclude_from_campaign"] != true {
			t.Fatalf("exclude_from_campaign beside offer: %v", o["exclude_from_campaign"])
		}
		id := o["id"].(string)
		// Beside offer in a PATCH too, and the same value in both places.
		patched := b.call("PATCH", "/external_api/v1/offers/"+id, map[string]any{"offer": map[string]any{"name": "Turma B"},
			"exclude_from_campaign": false}).want(t, 200).JSON(t)
		if patched["exclude_from_campaign"] != false || patched["name"] != "Turma B" {
			t.Fatalf("PATCH beside offer: %v, %v", patched["exclude_from_campaign"], patched["name"])
		}
		b.call("PATCH", "/external_api/v1/offers/"+id, map[string]any{"offer": map[string]any{"exclude_from_campaign": true},
			"exclude_from_campaign": true}).want(t, 200)

		// Two values: neither is kept.
		body = offerBody(p["id"].(string))
		body["offer"].(map[string]any)["exclude_from_campaign"] = false
		body["exclude_from_campaign"] = true
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/offers", body)); got["exclude_from_campaign"] != "invalid" || len(got) != 1 {
			t.Errorf("two values on create: %v", got)
		}
		if got := fieldCodes(t, b.call("PATCH", "/external_api/v1/offers/"+id, map[string]any{"offer": map[string]any{"exclude_from_campaign": false},
			"exclude_from_campaign": true})); got["exclude_from_campaign"] != "invalid" || len(got) != 1 {
			t.Errorf("two values on PATCH: %v", got)
		}
		if again := b.call("GET", "/external_api/v1/offers/"+id, nil).want(t, 200).JSON(t); again["exclude_from_campaign"] != true {
			t.Errorf("a refused PATCH changed exclude_from_campaign: %v", again["exclude_from_campaign"])
		}

		// payment_configurations inside offer: refused by name, with or
		// without the top-level ones.
		body = offerBody(p["id"].(string))
		body["offer"].(map[string]any)["payment_configurations"] = body["payment_configurations"]
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/offers", body)); got["offer.payment_configurations"] != "not_allowed" || len(got) != 1 {
			t.Errorf("payment_configurations in offer and beside it: %v", got)
		}
		delete(body, "payment_configurations")
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/offers", body)); got["offer.payment_configurations"] != "not_allowed" || got["payment_configurations"] != "required" {
			t.Errorf("payment_configurations only in offer: %v", got)
		}
	})
}
