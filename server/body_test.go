package server_test

import (
	"strings"
	"testing"
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
