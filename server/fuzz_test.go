package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"parcela"
)

// The fuzz targets: one per request body and per query, through the real
// handlers on a SQLite store. Whatever a client sends, the answer is never
// a server error (nor a recovered panic), and every 4xx is a problem
// document. Their corpora are in testdata/fuzz; `.ci/run` fuzzes each
// briefly.

// The fuzz seeds' ids are placeholders the server fills (fuzzServer.fill).
func seedJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func FuzzProductBody(f *testing.F) {
	f.Add(seedJSON(productBody()))
	f.Add([]byte(`{"product": {"name": "Curso", "full_amount_cents": 1e400, "kind": "course", "shift": "evening"}}`))
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		body = s.fill(body)
		s.check(t, "POST", "/external_api/v1/products", nil, body)
		s.check(t, "PATCH", "/external_api/v1/products/"+s.ids["product"], nil, body)
	})
}

func FuzzOfferBody(f *testing.F) {
	f.Add(seedJSON(offerBody("{product}")))
	f.Add(seedJSON(map[string]any{"offer": map[string]any{"name": "Nova turma", "seats": 10, "availability": "disabled"}}))
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		body = s.fill(body)
		s.check(t, "POST", "/external_api/v1/offers", nil, body)
		s.check(t, "PATCH", "/external_api/v1/offers/"+s.ids["offer"], nil, body)
	})
}

func FuzzOrderBody(f *testing.F) {
	f.Add(seedJSON(orderBody("{offer}")))
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		s.check(t, "POST", "/external_api/v1/orders", nil, s.fill(body))
	})
}

// Cancels decode and check their reason before looking the order or the
// billing up: a fresh id keeps the fixtures as they are.
func FuzzCancelBody(f *testing.F) {
	f.Add([]byte(`{"reason": "the customer gave up"}`))
	f.Add([]byte(`{"cancelation_reason": "customer_request"}`))
	f.Add([]byte(``))
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		body = s.fill(body)
		s.check(t, "POST", "/external_api/v1/orders/"+parcela.NewID()+"/cancel", nil, body)
		s.check(t, "POST", "/external_api/v1/billings/"+parcela.NewID()+"/cancel", nil, body)
	})
}

// Each charge is of a new pending order, so that a fuzzed body that
// charges does not leave the next one a conflict.
func FuzzChargeBody(f *testing.F) {
	for _, cfg := range []string{"{upfront}", "{financed}"} {
		for _, method := range []string{"pix", "boleto", "credit_card"} {
			f.Add(seedJSON(chargeBody(cfg, method, 3)))
		}
	}
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		s.check(t, "POST", "/external_api/v1/orders/"+s.newOrder(t)+"/charge", nil, s.fill(body))
	})
}

func FuzzBillPatch(f *testing.F) {
	f.Add([]byte(`{"bill": {"disable_penalties_until": "2026-12-31T23:59:59-03:00"}}`))
	f.Add([]byte(`{"bill": {"disable_penalties_until": null}}`))
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		s.check(t, "PATCH", "/external_api/v1/bills/"+s.ids["bill"], nil, s.fill(body))
	})
}

// A webhook the fuzzer creates is deleted again, so the company stays
// under its limit and creations keep reaching the store.
func FuzzWebhookBody(f *testing.F) {
	f.Add([]byte(`{"name": "ERP", "url": "https://erp.example.com/hooks", "entity": "bill", "events": ["paid", "overdue"], "verb": "post"}`))
	f.Add([]byte(`{"events": ["in_progress"], "enabled": false}`))
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		body = s.fill(body)
		if s.check(t, "POST", "/external_api/v1/webhooks", nil, body) == http.StatusCreated {
			_, out := s.serve("GET", "/external_api/v1/webhooks", nil, nil)
			var hooks []map[string]any
			if err := json.Unmarshal(out, &hooks); err != nil {
				t.Fatal(err)
			}
			for _, h := range hooks {
				if id := h["id"].(string); id != s.ids["webhook"] {
					s.check(t, "DELETE", "/external_api/v1/webhooks/"+id, nil, nil)
				}
			}
		}
		s.check(t, "PATCH", "/external_api/v1/webhooks/"+s.ids["webhook"], nil, body)
	})
}

func FuzzSandboxPay(f *testing.F) {
	f.Add([]byte(``))
	f.Add([]byte(`{"paid_amount_cents": 24000, "paid_at": "2026-11-21T10:00:00-03:00"}`))
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		body = s.fill(body)
		s.check(t, "POST", "/external_api/v1/sandbox/payments/"+parcela.NewID()+"/pay", nil, body)
		s.check(t, "POST", "/external_api/v1/sandbox/payments/"+s.ids["payment"]+"/pay", nil, body)
	})
}

func FuzzBillsQuery(f *testing.F) {
	f.Add("order_id={order}&status=pending&due_date_start=2026-11-01&due_date_end=2027-12-31&page=1&per_page=100")
	f.Add("billing_id={billing}&paid_at_start=2026-11-01&paid_at_end=2026-11-30")
	f.Add("order_id=%00&page=99999999999999999999")
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, query string) {
		query = string(s.fill([]byte(query)))
		s.check(t, "GET", "/external_api/v1/bills", &query, nil)
	})
}

// Pages of every listing, and the delivery listing's webhook filter.
func FuzzPageQuery(f *testing.F) {
	f.Add("1", "25", "{webhook}")
	f.Add("100000", "1000", "")
	f.Add("-1", "0", "not-an-id")
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, page, perPage, webhookID string) {
		q := url.Values{"page": {page}, "per_page": {perPage}}.Encode()
		for _, path := range []string{"/external_api/v1/products", "/external_api/v1/offers", "/external_api/v1/bills"} {
			s.check(t, "GET", path, &q, nil)
		}
		q = url.Values{"page": {page}, "per_page": {perPage}, "webhook_id": {string(s.fill([]byte(webhookID)))}}.Encode()
		s.check(t, "GET", "/external_api/v1/webhook_deliveries", &q, nil)
	})
}

// Any id in any path: a missing or malformed one is a 404, never a query
// that fails.
func FuzzPathID(f *testing.F) {
	for _, id := range []string{"{product}", "{order}", "{bill}", "{payment}", "0195a3f0-0000-7000-8000-000000000000", "x\x00y", "..", "%zz", "é"} {
		f.Add(id)
	}
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, id string) {
		id = string(s.fill([]byte(id)))
		for _, c := range []struct{ method, path string }{
			{"GET", "/external_api/v1/products/"}, {"GET", "/external_api/v1/offers/"}, {"GET", "/external_api/v1/orders/"},
			{"GET", "/external_api/v1/billings/"}, {"GET", "/external_api/v1/bills/"}, {"GET", "/external_api/v1/webhooks/"},
			{"POST", "/external_api/v1/webhook_deliveries/"}, {"POST", "/external_api/v1/sandbox/payments/"}, {"GET", "/external_api/v1/payments/"},
		} {
			path := c.path + id
			switch c.path {
			case "/external_api/v1/webhook_deliveries/":
				path += "/retry"
			case "/external_api/v1/sandbox/payments/":
				path += "/expire"
			case "/external_api/v1/payments/":
				path += "/barcode.png"
			}
			s.check(t, c.method, path, nil, nil)
		}
	})
}
