package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"parcela"
)

// alike reduces a response to what a client could tell two ids apart by:
// its status and its body, with the ids named and the request's id (which
// differs on every request) left out.
func alike(t *testing.T, r resp, ids ...string) string {
	t.Helper()
	body := r.Body
	for _, id := range ids {
		body = bytes.ReplaceAll(body, []byte(id), []byte("ID"))
	}
	var v map[string]any
	if json.Unmarshal(body, &v) == nil {
		delete(v, "request_id")
		body, _ = json.Marshal(v)
	}
	return http.StatusText(r.Status) + " " + string(requestIDRE.ReplaceAll(body, []byte("req_…")))
}

var requestIDRE = regexp.MustCompile(`req_[0-9a-f]+`)

// An id of another company, or of the other environment, is answered as an
// id of nothing is, on every route and inside every body that names one:
// any difference (a 403, a 409 or 422 naming the entity's state, another
// message) tells a stranger the id exists. TestEveryRouteIsolated holds the
// 404s; this holds that nothing else tells them apart either, bodies
// invalid or not.
func TestForeignIDsAnsweredAsMissing(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		const v1 = "/external_api/v1"
		hook := b.hook(t, "https://hooks.example.com/x", "bill", "pending", "paid")["id"].(string)
		offer, order := b.order()
		offerID := offer["id"].(string)
		up, fin := configs(offer)
		oid := order["id"].(string)
		charged := b.call("POST", v1+"/orders/"+oid+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
		billing := charged["billings"].([]any)[0].(map[string]any)["id"].(string)
		bill := billIDs(charged)[0]
		payment := openPayment(t, b.bill(t, bill))["id"].(string)
		delivery := b.call("GET", v1+"/webhook_deliveries", nil).want(t, 200).JSON(t)["results"].([]any)[0].(map[string]any)["id"].(string)
		product := offer["product"].(map[string]any)["id"].(string)
		// An order of the same company left uncharged, to charge naming
		// another's configurations.
		_, fresh := b.order()
		freshID := fresh["id"].(string)

		missing := parcela.NewID()
		callers := map[string][2]string{
			"other company":     {b.sandbox.URL, b.otherToken},
			"other environment": {b.production.URL, b.prodToken},
		}
		routes := []struct {
			method, path string // path holds %s for the id
			body         any
		}{
			{"GET", v1 + "/products/%s", nil},
			{"PATCH", v1 + "/products/%s", map[string]any{"product": map[string]any{"name": "x"}}},
			{"PATCH", v1 + "/products/%s", map[string]any{"product": map[string]any{"kind": "nope"}}},
			{"GET", v1 + "/offers/%s", nil},
			{"PATCH", v1 + "/offers/%s", map[string]any{"offer": map[string]any{"name": "x"}}},
			{"PATCH", v1 + "/offers/%s", map[string]any{"offer": map[string]any{"amount_cents": 1}}},
			{"PATCH", v1 + "/offers/%s", map[string]any{"offer": map[string]any{"seats": 1}}},
			{"GET", v1 + "/orders/%s", nil},
			{"POST", v1 + "/orders/%s/cancel", nil},
			{"POST", v1 + "/orders/%s/charge", chargeBody(fin, "pix", 3)},
			{"POST", v1 + "/orders/%s/charge", chargeBody(up, "pix", 1)},
			{"POST", v1 + "/orders/%s/charge", chargeBody(missing, "pix", 1)},
			{"POST", v1 + "/orders/%s/charge", map[string]any{"payment_configuration_id": fin, "due_day": 99, "installments": 30}},
			{"POST", v1 + "/orders/%s/charge", chargeBody(fin, "credit_card", 3)},
			{"POST", v1 + "/orders/%s/cancel", map[string]any{"cancelation_reason": "nope"}},
			{"GET", v1 + "/billings/%s", nil},
			{"POST", v1 + "/billings/%s/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}},
			{"POST", v1 + "/billings/%s/cancel", map[string]any{"cancelation_reason": "nope"}},
			{"GET", v1 + "/bills/%s", nil},
			{"PATCH", v1 + "/bills/%s", map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-02-01T23:59:59-03:00"}}},
			{"PATCH", v1 + "/bills/%s", map[string]any{"bill": map[string]any{"disable_penalties_until": "2020-02-01T23:59:59-03:00"}}},
			{"PATCH", v1 + "/bills/%s", map[string]any{"bill": map[string]any{"disable_penalties_until": nil}}},
			{"PATCH", v1 + "/bills/%s", map[string]any{"bill": map[string]any{}}},
			{"PATCH", v1 + "/products/%s", map[string]any{"product": map[string]any{"full_amount_cents": 1}}},
			{"PATCH", v1 + "/offers/%s", map[string]any{"offer": map[string]any{"expires_at": "2020-01-01T00:00:00Z"}}},
			{"PATCH", v1 + "/webhooks/%s", map[string]any{"events": []string{"nope"}}},
			{"POST", v1 + "/sandbox/payments/%s/pay", map[string]any{"paid_amount_cents": 1}},
			{"POST", v1 + "/sandbox/payments/%s/pay", map[string]any{"notice_id": "E123"}},
			{"GET", v1 + "/bills?billing_id=%s", nil},
			{"GET", v1 + "/bills?order_id=%s", nil},
			{"GET", v1 + "/webhooks/%s", nil},
			{"PATCH", v1 + "/webhooks/%s", map[string]any{"name": "x"}},
			{"PATCH", v1 + "/webhooks/%s", map[string]any{"url": "http://127.0.0.1/x"}},
			{"DELETE", v1 + "/webhooks/%s", nil},
			{"POST", v1 + "/webhooks/%s/rotate_secret", nil},
			{"GET", v1 + "/webhook_deliveries?webhook_id=%s", nil},
			{"GET", v1 + "/webhook_deliveries/%s", nil},
			{"POST", v1 + "/webhook_deliveries/%s/retry", nil},
			{"POST", v1 + "/sandbox/payments/%s/pay", nil},
			{"POST", v1 + "/sandbox/payments/%s/pay", map[string]any{"amount_cents": 1}},
			{"POST", v1 + "/sandbox/payments/%s/expire", nil},
		}
		ids := map[string]string{
			"/products/": product, "/offers/": offerID, "/orders/": oid, "/billings/": billing, "/bills/": bill,
			"billing_id=": billing, "order_id=": oid, "/webhooks/": hook, "webhook_id=": hook,
			"/webhook_deliveries/": delivery, "/payments/": payment,
		}
		for _, rt := range routes {
			id := ""
			for marker, v := range ids {
				if bytes.Contains([]byte(rt.path), []byte(marker+"%s")) {
					id = v
				}
			}
			if id == "" {
				t.Fatalf("no id for %s", rt.path)
			}
			for name, call := range callers {
				at := func(id string) resp {
					return b.send(call[0], call[1], rt.method, fmt.Sprintf(rt.path, id), rt.body, nil)
				}
				if got, want := alike(t, at(id), id, missing), alike(t, at(missing), id, missing); got != want {
					t.Errorf("%s: %s %s: a stranger's id is answered\n%s\nwhere an id of nothing is\n%s", name, rt.method, rt.path, got, want)
				}
			}
		}

		// Ids named inside a body: another company's or environment's
		// product, offer or payment configuration is one of nothing.
		otherProduct := b.send(b.sandbox.URL, b.otherToken, "POST", v1+"/products", productBody(), nil).want(t, 201).JSON(t)["id"].(string)
		otherOffer := b.send(b.sandbox.URL, b.otherToken, "POST", v1+"/offers", offerBody(otherProduct), nil).want(t, 201).JSON(t)
		otherUp, otherFin := configs(otherOffer)
		prodProduct := b.send(b.production.URL, b.prodToken, "POST", v1+"/products", productBody(), nil).want(t, 201).JSON(t)["id"].(string)
		prodOffer := b.send(b.production.URL, b.prodToken, "POST", v1+"/offers", offerBody(prodProduct), nil).want(t, 201).JSON(t)
		prodUp, prodFin := configs(prodOffer)
		bodies := []struct {
			name, path string
			body       func(id string) any
			foreign    []string
		}{
			{"offer naming a product", v1 + "/offers", func(id string) any { return offerBody(id) }, []string{otherProduct, prodProduct}},
			{"order naming an offer", v1 + "/orders", func(id string) any { return orderBody(id) }, []string{otherOffer["id"].(string), prodOffer["id"].(string)}},
			{"charge naming a configuration", v1 + "/orders/" + freshID + "/charge", func(id string) any { return chargeBody(id, "pix", 3) },
				[]string{otherUp, otherFin, prodUp, prodFin}},
		}
		for _, c := range bodies {
			want := alike(t, b.call("POST", c.path, c.body(missing)), missing)
			for _, id := range c.foreign {
				if got := alike(t, b.call("POST", c.path, c.body(id)), id); got != want {
					t.Errorf("%s %s: a stranger's id is answered\n%s\nwhere an id of nothing is\n%s", c.name, id, got, want)
				}
			}
		}
		// And the other way round: this company's product and offer are
		// nothing to the other company and the other environment.
		for name, call := range callers {
			for _, c := range []struct{ path, id string }{{v1 + "/offers", product}, {v1 + "/orders", offerID}} {
				body := func(id string) any { return offerBody(id) }
				if c.path == v1+"/orders" {
					body = func(id string) any { return orderBody(id) }
				}
				want := alike(t, b.send(call[0], call[1], "POST", c.path, body(missing), nil), missing)
				if got := alike(t, b.send(call[0], call[1], "POST", c.path, body(c.id), nil), c.id); got != want {
					t.Errorf("%s: POST %s naming %s is answered\n%s\nwhere an id of nothing is\n%s", name, c.path, c.id, got, want)
				}
			}
		}
		// Nothing above charged the order.
		if got := b.call("GET", v1+"/orders/"+freshID, nil).want(t, 200).JSON(t)["billings"].([]any); len(got) != 0 {
			t.Fatalf("the order was charged naming a stranger's configuration: %v", got)
		}
	})
}

// The sandbox's bank plays only the sandbox's payments: a production
// payment's id sent to the sandbox's pay and expire routes, with the same
// company's sandbox token, is one of nothing, and the sandbox serves no
// image of it.
func TestSandboxBankRefusesProductionPayments(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		const v1 = "/external_api/v1"
		prod := func(method, path string, body any) resp {
			return b.send(b.production.URL, b.prodToken, method, path, body, nil)
		}
		product := prod("POST", v1+"/products", productBody()).want(t, 201).JSON(t)["id"].(string)
		offer := prod("POST", v1+"/offers", offerBody(product)).want(t, 201).JSON(t)
		order := prod("POST", v1+"/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)["id"].(string)
		_, fin := configs(offer)
		charged := prod("POST", v1+"/orders/"+order+"/charge", chargeBody(fin, "pix", 3))
		if charged.Status != 200 {
			t.Skipf("production does not charge here: %d %s", charged.Status, charged.Body)
		}
		bill := billIDs(charged.JSON(t))[0]
		var payment string
		for _, p := range prod("GET", v1+"/bills/"+bill, nil).want(t, 200).JSON(t)["payments"].([]any) {
			payment = p.(map[string]any)["id"].(string)
		}
		missing := parcela.NewID()
		for _, path := range []string{"/sandbox/payments/%s/pay", "/sandbox/payments/%s/expire"} {
			at := func(id string) resp { return b.call("POST", v1+fmt.Sprintf(path, id), nil) }
			if got, want := alike(t, at(payment), payment, missing), alike(t, at(missing), payment, missing); got != want {
				t.Errorf("POST %s of a production payment: %s, where one of nothing is %s", path, got, want)
			}
		}
		for _, kind := range []string{"barcode.png", "pix.png"} {
			b.send(b.sandbox.URL, "", "GET", v1+"/payments/"+payment+"/"+kind, nil, nil).want(t, 404)
		}
		for _, p := range prod("GET", v1+"/bills/"+bill, nil).want(t, 200).JSON(t)["payments"].([]any) {
			if s := p.(map[string]any)["status"]; s != "unpaid" {
				t.Errorf("the production payment is %v after the sandbox's bank", s)
			}
		}
	})
}
