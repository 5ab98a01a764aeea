package server_test

import (
	"testing"
)

// A required name made only of invisible format characters (zero-width
// space and joiners, word joiner, byte-order mark, soft hyphen, direction
// marks), or of the letters that show nothing alone (the Hangul fillers,
// the blank Braille cell), is no name: it is refused as an empty one is, not stored and
// shown as a blank. Around a real name they are trimmed; inside one they
// stay.
func TestInvisibleOnlyNamesAreRequired(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer := b.offer()
		offerID := offer["id"].(string)
		productID := offer["product"].(map[string]any)["id"].(string)
		required := func(t *testing.T, what string, r resp, field string) {
			t.Helper()
			if got := fieldCodes(t, r); got[field] != "required" {
				t.Errorf("%s: %v, want %s required", what, got, field)
			}
		}
		for _, name := range []string{"\u200b", "\u2060", "\ufeff", "\u00ad", "\u200b\u200c\u200d", " \u200e\u00a0", "\u3164", "\u2800 \uffa0", "\u034f", "\ufe0f\u17b4"} {
			body := orderBody(offerID)
			body["order"].(map[string]any)["customer_name"] = name
			required(t, "order "+name, b.call("POST", "/external_api/v1/orders", body), "order.customer_name")
			p := productBody()
			p["product"].(map[string]any)["name"] = name
			required(t, "product "+name, b.call("POST", "/external_api/v1/products", p), "product.name")
			o := offerBody(productID)
			o["offer"].(map[string]any)["name"] = name
			required(t, "offer "+name, b.call("POST", "/external_api/v1/offers", o), "offer.name")
			patch := map[string]any{"offer": map[string]any{"name": name}}
			required(t, "offer patch "+name, b.call("PATCH", "/external_api/v1/offers/"+offerID, patch), "offer.name")
			w := webhookBody(1)
			w["name"] = name
			required(t, "webhook "+name, b.call("POST", "/external_api/v1/webhooks", w), "name")
		}

		body := orderBody(offerID)
		body["order"].(map[string]any)["customer_name"] = "\ufeff\u200bMaria 👩\u200d💻 da Silva\u200b"
		got := b.call("POST", "/external_api/v1/orders", body).want(t, 201).JSON(t)
		if got["customer_name"] != "Maria 👩\u200d💻 da Silva" {
			t.Errorf("customer_name stored as %+q", got["customer_name"])
		}
	})
}

// An order's cancel takes its reason as reason or as cancelation_reason,
// the name the order and the billing's cancel give it: sent under that
// name, it was ignored as an unknown field, and refunded_by_company was
// recorded as customer_dropout. Both, differing, are refused.
func TestOrderCancelTakesCancelationReason(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, order := b.order()
		id := order["id"].(string)
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/orders/"+id+"/cancel",
			map[string]any{"reason": "customer_dropout", "cancelation_reason": "refunded_by_company"})); got["cancelation_reason"] != "invalid" {
			t.Fatalf("two reasons: %v", got)
		}
		// A value refused is refused on the field that carried it: on
		// cancelation_reason it was named reason, a field never sent.
		for field, value := range map[string]string{"reason": "expired", "cancelation_reason": "expired"} {
			if got := fieldCodes(t, b.call("POST", "/external_api/v1/orders/"+id+"/cancel",
				map[string]any{field: value})); len(got) != 1 || got[field] != "invalid" {
				t.Fatalf("%s %q refused on %v", field, value, got)
			}
		}
		c := b.call("POST", "/external_api/v1/orders/"+id+"/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}).want(t, 200).JSON(t)
		if c["status"] != "canceled" || c["cancelation_reason"] != "refunded_by_company" {
			t.Fatalf("canceled with cancelation_reason: %v (%v)", c["status"], c["cancelation_reason"])
		}
	})
}
