package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"parcela/sqldb"
)

// A body is JSON of at most 1 MiB on the operations that take one (413 and
// 415 otherwise, as they document). The operations that take none do not
// read one: a body sent to them changes nothing, and their documents list
// no 400, 413 or 415 (they answered all three).
func TestBodies(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		big := `{"product": {"name": "` + strings.Repeat("x", 1<<20) + `"}}`
		plain := map[string]string{"Content-Type": "text/plain"}
		b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", big, nil).want(t, 413)
		b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", "name=x", plain).want(t, 415)
		b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", "{", nil).want(t, 400)

		offer, order := b.order()
		_, fin := configs(offer)
		charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
		bill := b.bill(t, billIDs(charged)[0])
		payment := openPayment(t, bill)["id"].(string)
		hook := b.call("POST", "/external_api/v1/webhooks", map[string]any{"name": "ERP", "url": "https://erp.example.com/hooks",
			"entity": "bill", "events": []string{"paid"}, "verb": "post"}).want(t, 201).JSON(t)["id"].(string)
		for _, c := range []struct {
			method, path string
			status       int
		}{
			{"GET", "/external_api/v1/bills", 200},
			{"GET", "/external_api/v1/orders/" + order["id"].(string), 200},
			{"GET", "/external_api/v1/webhooks", 200},
			{"POST", "/external_api/v1/webhooks/" + hook + "/rotate_secret", 200},
			{"POST", "/external_api/v1/sandbox/payments/" + payment + "/expire", 200},
			{"DELETE", "/external_api/v1/webhooks/" + hook, 204},
		} {
			for _, body := range []struct {
				text   string
				header map[string]string
			}{{"name=x", plain}, {big, nil}, {"{", nil}} {
				r := b.send(b.sandbox.URL, b.token, c.method, c.path, body.text, body.header)
				if c.method == "DELETE" && r.Status == 404 {
					continue // deleted by the first body
				}
				if c.method == "POST" && strings.HasSuffix(c.path, "/expire") && r.Status == 409 {
					continue // expired by the first body
				}
				r.want(t, c.status)
			}
		}
	})
}

// A value a rate or a timestamp refuses is answered naming its field, as a
// value of the wrong JSON type is: a string for a rate, a number for a
// timestamp (400), a string that is no timestamp (422, as a date that is
// none). They answered 400 with encoding/json's text and no field.
func TestRefusedValuesNameTheirField(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
		bill := billIDs(charged)[0]
		payment := openPayment(t, b.bill(t, bill))["id"].(string)
		product := offer["product"].(map[string]any)["id"].(string)
		offerWith := func(field string, value any) map[string]any {
			body := offerBody(product)
			body["offer"].(map[string]any)["amount_cents"] = 1000
			if field == "expires_at" {
				body["offer"].(map[string]any)[field] = value
			} else {
				body["payment_configurations"].([]any)[1].(map[string]any)[field] = value
			}
			return body
		}
		for _, c := range []struct {
			method, path string
			body         any
			status       int
			field, code  string
		}{
			{"POST", "/external_api/v1/offers", offerWith("interest_rate", "0.02"), 400, "payment_configurations[1].interest_rate", "invalid_type"},
			{"POST", "/external_api/v1/offers", offerWith("max_installments", "12"), 400, "payment_configurations[1].max_installments", "invalid_type"},
			{"POST", "/external_api/v1/offers", offerWith("max_installments", json.Number("99999999999999999999")), 422, "payment_configurations[1].max_installments", "too_large"},
			{"POST", "/external_api/v1/offers", offerWith("expires_at", "2030-01-01"), 422, "offer.expires_at", "invalid"},
			{"POST", "/external_api/v1/offers", offerWith("expires_at", 1893456000), 400, "offer.expires_at", "invalid_type"},
			{"PATCH", "/external_api/v1/offers/" + offer["id"].(string), map[string]any{"offer": map[string]any{"expires_at": "2030-02-30T00:00:00Z"}}, 422, "offer.expires_at", "invalid"},
			// As the contract says: an uppercase T and Z, no 24:00, no leap second, an offset.
			{"PATCH", "/external_api/v1/offers/" + offer["id"].(string), map[string]any{"offer": map[string]any{"expires_at": "2030-02-01t00:00:00z"}}, 422, "offer.expires_at", "invalid"},
			{"PATCH", "/external_api/v1/offers/" + offer["id"].(string), map[string]any{"offer": map[string]any{"expires_at": "2030-02-01T24:00:00-03:00"}}, 422, "offer.expires_at", "invalid"},
			{"PATCH", "/external_api/v1/offers/" + offer["id"].(string), map[string]any{"offer": map[string]any{"expires_at": "2030-12-31T23:59:60Z"}}, 422, "offer.expires_at", "invalid"},
			{"PATCH", "/external_api/v1/offers/" + offer["id"].(string), map[string]any{"offer": map[string]any{"expires_at": "2030-02-01T00:00:00"}}, 422, "offer.expires_at", "invalid"},
			{"PATCH", "/external_api/v1/bills/" + bill, map[string]any{"bill": map[string]any{"disable_penalties_until": "2026-12-01"}}, 422, "bill.disable_penalties_until", "invalid"},
			{"PATCH", "/external_api/v1/bills/" + bill, map[string]any{"bill": map[string]any{"disable_penalties_until": 5}}, 400, "bill.disable_penalties_until", "invalid_type"},
			{"POST", "/external_api/v1/sandbox/payments/" + payment + "/pay", map[string]any{"paid_at": "yesterday"}, 422, "paid_at", "invalid"},
		} {
			r := b.call(c.method, c.path, c.body).want(t, c.status)
			p := r.JSON(t)
			errs, _ := p["errors"].([]any)
			if len(errs) != 1 || errs[0].(map[string]any)["field"] != c.field || errs[0].(map[string]any)["code"] != c.code ||
				!strings.HasPrefix(p["detail"].(string), c.field+" must be ") {
				t.Errorf("%s %s %v: %s", c.method, c.path, c.body, r.Body)
			}
		}
	})
}

// A PATCH's null is refused on a field the contract does not let be null,
// naming it, where it was read as an absent field: PATCH banner_url: null
// answered 200 and kept the banner a client meant to remove. Seats and
// expires_at take null, which removes them.
func TestPatchNullOnlyWhereTheContractTakesIt(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer := b.offer()
		product := "/external_api/v1/products/" + offer["product"].(map[string]any)["id"].(string)
		b.call("PATCH", product, map[string]any{"product": map[string]any{"banner_url": "https://cdn.example.com/banner.png"}}).want(t, 200)
		hook := b.call("POST", "/external_api/v1/webhooks", map[string]any{"name": "ERP", "url": "https://hooks.example.com/parcela",
			"entity": "bill", "events": []string{"paid"}, "verb": "post"}).want(t, 201).JSON(t)
		for _, c := range []struct{ path, object, field string }{
			{product, "product", "description"}, {product, "product", "name"}, {product, "product", "full_amount_cents"},
			{"/external_api/v1/offers/" + offer["id"].(string), "offer", "name"},
			{"/external_api/v1/offers/" + offer["id"].(string), "offer", "availability"},
			{"/external_api/v1/webhooks/" + hook["id"].(string), "", "url"},
			{"/external_api/v1/webhooks/" + hook["id"].(string), "", "enabled"},
		} {
			body, field := map[string]any{c.field: nil}, c.field
			if c.object != "" {
				body, field = map[string]any{c.object: body}, c.object+"."+c.field
			}
			p := b.call("PATCH", c.path, body).want(t, 400).JSON(t)
			if errs, _ := p["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["field"] != field || errs[0].(map[string]any)["code"] != "invalid_type" {
				t.Errorf("PATCH %s null: %v", field, p)
			}
		}
		if got := b.call("GET", product, nil).want(t, 200).JSON(t); got["banner_url"] != "https://cdn.example.com/banner.png" {
			t.Errorf("banner_url after the refused nulls: %v", got["banner_url"])
		}
		// The product's nullable fields are removed by null, where the
		// banner could not be removed at all ("" is no address).
		if got := b.call("PATCH", product, map[string]any{"product": map[string]any{"banner_url": nil}}).want(t, 200).JSON(t); got["banner_url"] != nil {
			t.Errorf("banner_url after null: %v", got["banner_url"])
		}
		cleared := b.call("PATCH", "/external_api/v1/offers/"+offer["id"].(string), map[string]any{"offer": map[string]any{"seats": nil, "expires_at": nil}}).want(t, 200).JSON(t)
		if cleared["seats"] != nil || cleared["expires_at"] != nil {
			t.Errorf("seats and expires_at after null: %v, %v", cleared["seats"], cleared["expires_at"])
		}
	})
}

// A body of JSON null is no object: an operation that needs a body
// refuses it as malformed, where it was read as {} and answered as a body
// missing its fields, and one whose body is optional reads it as none (a
// client marshalling no value sends null).
func TestNullBody(t *testing.T) {
	t.Parallel()
	b := setup(t, sqldb.SQLite)
	offer, order := b.order()
	up, _ := configs(offer)
	path := "/external_api/v1/orders/" + order["id"].(string)
	r := b.send(b.sandbox.URL, b.token, "POST", path+"/charge", "null", nil).want(t, 400)
	if got := r.JSON(t)["code"]; got != "malformed_request" {
		t.Fatalf("a charge of null: code %v: %s", got, r.Body)
	}
	b.call("POST", path+"/charge", chargeBody(up, "pix", 1)).want(t, 200)
	canceled := b.send(b.sandbox.URL, b.token, "POST", path+"/cancel", " null\n", nil).want(t, 200).JSON(t)
	if canceled["status"] != "canceled" || canceled["cancelation_reason"] != "customer_dropout" {
		t.Fatalf("a cancel of null: %v, %v", canceled["status"], canceled["cancelation_reason"])
	}
}
