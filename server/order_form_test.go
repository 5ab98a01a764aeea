package server_test

import "testing"

// The contract's order form of a payment configuration (inside an order's
// offer, and inside a billing) types down_payment_type a string, where its
// create-response form allows null: an upfront configuration showed null
// in every order, billing and their webhooks, and a client typed from the
// contract failed to read them. It shows `percentage`, beside its
// down_payment_value of 0; the create-response form keeps null.
func TestOrderFormDownPaymentTypeIsAString(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		up, _ := configs(offer)
		for _, pc := range offer["payment_configurations"].([]any) {
			if pc := pc.(map[string]any); pc["payment_type"] == "upfront" && pc["down_payment_type"] != nil {
				t.Errorf("create-response form of the upfront configuration: down_payment_type %#v, want null", pc["down_payment_type"])
			}
		}
		charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, "pix", 1)).want(t, 200).JSON(t)
		var forms []map[string]any
		for _, pc := range charged["offer"].(map[string]any)["payment_configurations"].([]any) {
			forms = append(forms, pc.(map[string]any))
		}
		forms = append(forms, charged["billings"].([]any)[0].(map[string]any)["payment_configuration"].(map[string]any))
		upfront := 0
		for _, pc := range forms {
			want := "percentage" // the fixture's financed configuration's, and every upfront one's
			if got := pc["down_payment_type"]; got != want {
				t.Errorf("order form of configuration %v (%v): down_payment_type %#v, want %q", pc["id"], pc["payment_type"], got, want)
			}
			if pc["payment_type"] == "upfront" {
				upfront++
				if v := pc["down_payment_value"]; v != 0.0 {
					t.Errorf("upfront configuration's down_payment_value %#v, want 0", v)
				}
			}
		}
		if upfront != 2 {
			t.Fatalf("%d upfront configurations in the order's offer and its billing, want 2", upfront)
		}
	})
}
