package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// A disabled product sells none of its offers, as a disabled offer sells
// nothing: its orders are neither created nor charged (422, the same
// problem with a message naming the product), while its offers may still
// be created and changed; enabled again, they sell.
func TestDisabledProductSellsNothing(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		offerID, orderID := offer["id"].(string), order["id"].(string)
		pid := offer["product"].(map[string]any)["id"].(string)
		up, _ := configs(offer)
		setProduct := func(availability string) {
			t.Helper()
			b.call("PATCH", "/external_api/v1/products/"+pid, map[string]any{"product": map[string]any{"availability": availability}}).want(t, 200)
		}
		// refused checks a 422 refusal of field, with the message naming the product.
		refused := func(what string, r resp, field string) {
			t.Helper()
			if got := fieldCodes(t, r); got[field] != "not_sellable" {
				t.Fatalf("%s of a disabled product's offer: %v", what, got)
			}
			var p struct {
				Detail string
				Errors []struct{ Field, Message string }
			}
			if err := json.Unmarshal(r.Body, &p); err != nil {
				t.Fatal(err)
			}
			for _, f := range p.Errors {
				if f.Field == field && !strings.Contains(f.Message, "the product is disabled") {
					t.Errorf("%s: message %q does not say the product is disabled", what, f.Message)
				}
			}
		}
		setProduct("disabled")
		refused("an order", b.call("POST", "/external_api/v1/orders", orderBody(offerID)), "order.offer_id")
		refused("a charge", b.call("POST", "/external_api/v1/orders/"+orderID+"/charge", chargeBody(up, "pix", 1)), "offer")
		if got := b.call("GET", "/external_api/v1/orders/"+orderID, nil).want(t, 200).JSON(t); got["status"] != "pending" || len(got["billings"].([]any)) != 0 {
			t.Fatalf("the refused charge left the order %v with billings %v", got["status"], got["billings"])
		}
		// A seller prepares offers before opening sales.
		prepared := b.call("POST", "/external_api/v1/offers", offerBody(pid)).want(t, 201).JSON(t)
		b.call("PATCH", "/external_api/v1/offers/"+offerID, map[string]any{"offer": map[string]any{"name": "Turma de abril"}}).want(t, 200)
		refused("an order of an offer created since", b.call("POST", "/external_api/v1/orders", orderBody(prepared["id"].(string))), "order.offer_id")

		setProduct("enabled")
		b.call("POST", "/external_api/v1/orders/"+orderID+"/charge", chargeBody(up, "pix", 1)).want(t, 200)
		b.call("POST", "/external_api/v1/orders", orderBody(prepared["id"].(string))).want(t, 201)
	})
}

// An order's offer is `enabled` only while it and its product both are:
// an integrator reading the order of a disabled product's offer is not
// told the offer is enabled, when it sells nothing.
func TestOrdersOfferEnabledFollowsItsProduct(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		offerID, orderID := offer["id"].(string), order["id"].(string)
		pid := offer["product"].(map[string]any)["id"].(string)
		enabled := func() any {
			t.Helper()
			return b.call("GET", "/external_api/v1/orders/"+orderID, nil).want(t, 200).JSON(t)["offer"].(map[string]any)["enabled"]
		}
		patch := func(path, key, availability string) {
			t.Helper()
			b.call("PATCH", path, map[string]any{key: map[string]any{"availability": availability}}).want(t, 200)
		}
		if got := enabled(); got != true {
			t.Fatalf("enabled offer of an enabled product: offer.enabled %v", got)
		}
		patch("/external_api/v1/products/"+pid, "product", "disabled")
		if got := enabled(); got != false {
			t.Fatalf("offer of a disabled product: offer.enabled %v", got)
		}
		patch("/external_api/v1/products/"+pid, "product", "enabled")
		patch("/external_api/v1/offers/"+offerID, "offer", "disabled")
		if got := enabled(); got != false {
			t.Fatalf("disabled offer: offer.enabled %v", got)
		}
		patch("/external_api/v1/offers/"+offerID, "offer", "enabled")
		if got := enabled(); got != true {
			t.Fatalf("offer and product enabled again: offer.enabled %v", got)
		}
	})
}
