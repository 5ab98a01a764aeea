package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

func TestProductOfferOrderForms(t *testing.T) {
	t.Parallel()
	// Golden files are written from SQLite and must match on every engine.
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			b := setup(t, e)
			p := b.call("POST", "/external_api/v1/products", productBody()).want(t, 201)
			golden(t, "product_create", p.Body)
			pid := p.JSON(t)["id"].(string)
			if got := b.call("GET", "/external_api/v1/products/"+pid, nil).want(t, 200).JSON(t); got["formatted_access_period"] != "365 dias" {
				t.Fatalf("formatted_access_period %v", got["formatted_access_period"])
			}
			o := b.call("POST", "/external_api/v1/offers", offerBody(pid)).want(t, 201)
			golden(t, "offer_create", o.Body, b.company.Slug)
			offer := o.JSON(t)
			if !strings.HasPrefix(offer["url"].(string), "https://sandbox.parcela.test/pay/"+b.company.Slug+"/offers/") {
				t.Fatalf("offer url %v", offer["url"])
			}
			// Rates come back as exact JSON numbers.
			if !strings.Contains(string(o.Body), `"interest_rate":0.0299`) || !strings.Contains(string(o.Body), `"down_payment_value":0.2`) {
				t.Fatalf("rates not exact: %s", o.Body)
			}
			g := b.call("GET", "/external_api/v1/offers/"+offer["id"].(string), nil).want(t, 200)
			golden(t, "offer_create", g.Body, b.company.Slug)
			ord := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201)
			golden(t, "order_pending", ord.Body, b.company.Name, b.company.Slug)
			order := ord.JSON(t)
			if order["status"] != "pending" || order["customer_document"] != "52998224725" || order["phone"] != "11987654321" {
				t.Fatalf("order %v", order)
			}
			got := b.call("GET", "/external_api/v1/orders/"+order["id"].(string), nil).want(t, 200)
			golden(t, "order_pending", got.Body, b.company.Name, b.company.Slug)
			b.call("GET", "/external_api/v1/offers", nil).want(t, 200)
			list := b.call("GET", "/external_api/v1/products?per_page=1", nil).want(t, 200).JSON(t)
			if list["total_items"] != float64(1) || list["total_pages"] != float64(1) {
				t.Fatalf("product list %v", list)
			}
		})
	}
}

// fieldCodes returns field → code from a 422 problem.
func fieldCodes(t *testing.T, r resp) map[string]string {
	t.Helper()
	r.want(t, 422)
	var p struct {
		Code   string
		Errors []parcela.FieldError
	}
	if err := json.Unmarshal(r.Body, &p); err != nil || p.Code != "validation_failed" {
		t.Fatalf("problem %s (%v)", r.Body, err)
	}
	out := map[string]string{}
	for _, f := range p.Errors {
		out[f.Field] = f.Code
	}
	return out
}

func TestOfferRules(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		p := b.product()
		pid := p["id"].(string)
		upfront := func(mod func(m map[string]any)) map[string]any {
			m := map[string]any{"payment_type": "upfront", "payment_methods": []string{"pix"}}
			mod(m)
			return m
		}
		financed := func(mod func(m map[string]any)) map[string]any {
			m := map[string]any{"payment_type": "financed", "allowed_down_payment_methods": []string{"pix"}, "down_payment_type": "percentage",
				"down_payment_value": json.Number("0.2"), "interest_rate": json.Number("0.02"), "max_installments": 6}
			mod(m)
			return m
		}
		same := func(m map[string]any) {}
		cases := []struct {
			name  string
			offer map[string]any
			pcs   any
			field string
			code  string
		}{
			{"amount below 500", map[string]any{"amount_cents": 499}, nil, "offer.amount_cents", "too_small"},
			{"amount missing", map[string]any{"amount_cents": nil}, nil, "offer.amount_cents", "required"},
			{"amount above product", map[string]any{"amount_cents": 150001}, nil, "offer.amount_cents", "too_large"},
			{"name missing", map[string]any{"name": ""}, nil, "offer.name", "required"},
			{"product missing", map[string]any{"product_id": "0195a3f0-0000-7000-8000-000000000000"}, nil, "offer.product_id", "not_found"},
			{"expires in the past", map[string]any{"expires_at": "2026-11-20T10:00:00-03:00"}, nil, "offer.expires_at", "in_past"},
			{"seats zero", map[string]any{"seats": 0}, nil, "offer.seats", "too_small"},
			{"no configurations", nil, []any{}, "payment_configurations", "too_small"},
			{"configuration type missing", nil, []any{map[string]any{}}, "payment_configurations[0].payment_type", "required"},
			{"configuration type unknown", nil, []any{map[string]any{"payment_type": "layaway"}}, "payment_configurations[0].payment_type", "invalid"},
			{"upfront without methods", nil, []any{map[string]any{"payment_type": "upfront"}}, "payment_configurations[0].payment_methods", "required"},
			{"upfront unknown method", nil, []any{upfront(func(m map[string]any) { m["payment_methods"] = []string{"cash"} })}, "payment_configurations[0].payment_methods", "invalid"},
			{"upfront with down payment", nil, []any{upfront(func(m map[string]any) { m["down_payment_type"] = "percentage" })}, "payment_configurations[0].down_payment_type", "not_allowed"},
			{"upfront with interest", nil, []any{upfront(func(m map[string]any) { m["interest_rate"] = json.Number("0.01") })}, "payment_configurations[0].interest_rate", "not_allowed"},
			{"upfront with installments", nil, []any{upfront(func(m map[string]any) { m["max_installments"] = 3 })}, "payment_configurations[0].max_installments", "not_allowed"},
			{"interest above company max", nil, []any{upfront(same), financed(func(m map[string]any) { m["interest_rate"] = json.Number("0.05") })}, "payment_configurations[1].interest_rate", "too_large"},
			{"negative interest", nil, []any{financed(func(m map[string]any) { m["interest_rate"] = json.Number("-0.01") })}, "payment_configurations[0].interest_rate", "too_small"},
			{"installments above company max", nil, []any{financed(func(m map[string]any) { m["max_installments"] = 25 })}, "payment_configurations[0].max_installments", "too_large"},
			// 80000 financed in 23 installments are about 4200 cents each, below the company's 5000.
			{"plans below the minimum installment", nil, []any{financed(func(m map[string]any) { m["max_installments"] = 24 })}, "payment_configurations[0].max_installments", "too_large"},
			{"a floor below the company's", nil, []any{financed(func(m map[string]any) { m["min_installment_amount_cents"] = 4999 })}, "payment_configurations[0].min_installment_amount_cents", "too_small"},
			{"interest 1e-61", nil, []any{financed(func(m map[string]any) { m["interest_rate"] = json.Number("1e-61") })}, "payment_configurations[0].interest_rate", "invalid"},
			{"interest 1e10000", nil, []any{financed(func(m map[string]any) { m["interest_rate"] = json.Number("1e10000") })}, "payment_configurations[0].interest_rate", "invalid"},
			{"name with NUL", map[string]any{"name": "Oferta\x00"}, nil, "offer.name", "invalid"},
			{"installments below 2", nil, []any{financed(func(m map[string]any) { m["max_installments"] = 1 })}, "payment_configurations[0].max_installments", "too_small"},
			{"down payment below company min", nil, []any{financed(func(m map[string]any) { m["down_payment_value"] = json.Number("0.05") })}, "payment_configurations[0].down_payment_value", "too_small"},
			{"percentage of 1 or more", nil, []any{financed(func(m map[string]any) { m["down_payment_value"] = json.Number("1") })}, "payment_configurations[0].down_payment_value", "too_large"},
			{"absolute not whole", nil, []any{financed(func(m map[string]any) {
				m["down_payment_type"] = "absolute"
				m["down_payment_value"] = json.Number("100.5")
			})}, "payment_configurations[0].down_payment_value", "invalid"},
			{"absolute above amount", nil, []any{financed(func(m map[string]any) { m["down_payment_type"] = "absolute"; m["down_payment_value"] = 120000 })}, "payment_configurations[0].down_payment_value", "too_large"},
			{"absolute below min rate", nil, []any{financed(func(m map[string]any) { m["down_payment_type"] = "absolute"; m["down_payment_value"] = 1000 })}, "payment_configurations[0].down_payment_value", "too_small"},
			{"down payment type missing", nil, []any{financed(func(m map[string]any) { delete(m, "down_payment_type") })}, "payment_configurations[0].down_payment_type", "required"},
			{"down payment type unknown", nil, []any{financed(func(m map[string]any) { m["down_payment_type"] = "fixed" })}, "payment_configurations[0].down_payment_type", "invalid"},
			{"down payment value missing", nil, []any{financed(func(m map[string]any) { delete(m, "down_payment_value") })}, "payment_configurations[0].down_payment_value", "required"},
			{"allowed methods missing", nil, []any{financed(func(m map[string]any) { delete(m, "allowed_down_payment_methods") })}, "payment_configurations[0].allowed_down_payment_methods", "required"},
			{"allowed methods empty", nil, []any{financed(func(m map[string]any) { m["allowed_down_payment_methods"] = []string{} })}, "payment_configurations[0].allowed_down_payment_methods", "too_small"},
			{"financed type unknown", nil, []any{financed(func(m map[string]any) { m["financed_type"] = "carne" })}, "payment_configurations[0].financed_type", "invalid"},
			{"financed without boleto", nil, []any{financed(func(m map[string]any) { m["payment_methods"] = []string{"pix"} })}, "payment_configurations[0].payment_methods", "invalid"},
			{"expiry out of range", nil, []any{upfront(func(m map[string]any) { m["expires_in_hours"] = 0 })}, "payment_configurations[0].expires_in_hours", "invalid"},
			{"registration fee above 1", nil, []any{upfront(func(m map[string]any) { m["registration_fee"] = json.Number("1.5") })}, "payment_configurations[0].registration_fee", "too_large"},
			{"take rate type from the seller", nil, []any{upfront(func(m map[string]any) { m["take_rate_type"] = "percentage" })}, "payment_configurations[0].take_rate_type", "not_allowed"},
			{"take rate from the seller", nil, []any{financed(func(m map[string]any) { m["take_rate_value"] = json.Number("0") })}, "payment_configurations[0].take_rate_value", "not_allowed"},
		}
		for _, c := range cases {
			offer := map[string]any{"name": "Oferta", "product_id": pid, "amount_cents": 100000}
			for k, v := range c.offer {
				if v == nil {
					delete(offer, k)
				} else {
					offer[k] = v
				}
			}
			pcs := c.pcs
			if pcs == nil {
				pcs = []any{upfront(same)}
			}
			got := fieldCodes(t, b.call("POST", "/external_api/v1/offers", map[string]any{"offer": offer, "payment_configurations": pcs}))
			if got[c.field] != c.code {
				t.Errorf("%s: want %s %s, got %v", c.name, c.field, c.code, got)
			}
		}
		// Every violation in one response.
		got := fieldCodes(t, b.call("POST", "/external_api/v1/offers", map[string]any{"offer": map[string]any{"amount_cents": 10, "seats": -1}}))
		for _, f := range []string{"offer.name", "offer.product_id", "offer.amount_cents", "offer.seats", "payment_configurations"} {
			if got[f] == "" {
				t.Errorf("combined errors lack %s: %v", f, got)
			}
		}
		// The product's amount can be raised, then the offer may exceed the old one.
		b.call("PATCH", "/external_api/v1/products/"+pid, map[string]any{"product": map[string]any{"full_amount_cents": 200000}}).want(t, 200)
		b.call("POST", "/external_api/v1/offers", map[string]any{"offer": map[string]any{"name": "Premium", "product_id": pid, "amount_cents": 180000},
			"payment_configurations": []any{upfront(same)}}).want(t, 201)
		if got := fieldCodes(t, b.call("PATCH", "/external_api/v1/products/"+pid, map[string]any{"product": map[string]any{"full_amount_cents": 150000}})); got["product.full_amount_cents"] != "too_small" {
			t.Errorf("lowering a product below an offer: %v", got)
		}
		// Defaults come from the company.
		o := b.call("POST", "/external_api/v1/offers", map[string]any{"offer": map[string]any{"name": "Padrão", "product_id": pid, "amount_cents": 150000},
			"payment_configurations": []any{financed(func(m map[string]any) { delete(m, "max_installments") })}}).want(t, 201).JSON(t)
		pc := o["payment_configurations"].([]any)[0].(map[string]any)
		if pc["max_installments"] != float64(b.company.MaxInstallments) || pc["min_installment_amount_cents"] != float64(5000) ||
			pc["expires_in"] != float64(72) || pc["financed_type"] != "bolepix" || pc["take_rate_type"] != "percentage" {
			t.Errorf("company defaults not applied: %v", pc)
		}
		// The list carries each offer exactly as its own GET does.
		list := b.call("GET", "/external_api/v1/offers?per_page=10", nil).want(t, 200)
		var page struct{ Results []json.RawMessage }
		if err := json.Unmarshal(list.Body, &page); err != nil || len(page.Results) != 2 {
			t.Fatalf("offer list: %v %s", err, list.Body)
		}
		for _, r := range page.Results {
			var o struct{ ID string }
			if err := json.Unmarshal(r, &o); err != nil {
				t.Fatal(err)
			}
			if one := b.call("GET", "/external_api/v1/offers/"+o.ID, nil).want(t, 200); string(one.Body) != string(r) {
				t.Errorf("listed offer differs from its GET:\n%s\n%s", r, one.Body)
			}
		}
	})
}

func TestProductAndOrderValidation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		got := fieldCodes(t, b.call("POST", "/external_api/v1/products", map[string]any{"product": map[string]any{
			"kind": "podcast", "shift": "night", "access_period": "period", "banner_url": "ftp://x", "start_date": "2027-13-01", "metadata": []int{1}}}))
		for _, f := range []string{"product.name", "product.full_amount_cents", "product.kind", "product.shift", "product.banner_url", "product.start_date", "product.end_date", "product.metadata"} {
			if got[f] == "" {
				t.Errorf("product errors lack %s: %v", f, got)
			}
		}
		offer := b.offer()
		body := orderBody(offer["id"].(string))
		o := body["order"].(map[string]any)
		o["customer_document"] = "529.982.247-24"
		o["customer_birthdate"] = "2030-01-01"
		o["email"] = "maria@"
		o["phone"] = "1234"
		o["address"].(map[string]any)["zipcode"] = "123"
		o["address"].(map[string]any)["city_ibge_code"] = "99"
		delete(o, "customer_name")
		got = fieldCodes(t, b.call("POST", "/external_api/v1/orders", body))
		for _, f := range []string{"order.customer_document", "order.customer_birthdate", "order.email", "order.phone", "order.address.zipcode",
			"order.address.city_ibge_code", "order.customer_name"} {
			if got[f] == "" {
				t.Errorf("order errors lack %s: %v", f, got)
			}
		}
		body = orderBody(offer["id"].(string))
		body["order"].(map[string]any)["address"].(map[string]any)["city_ibge_code"] = "9999999"
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/orders", body)); got["order.address.city_ibge_code"] != "not_found" {
			t.Errorf("unknown city: %v", got)
		}
		// A disabled offer cannot be sold.
		b.call("PATCH", "/external_api/v1/offers/"+offer["id"].(string), map[string]any{"offer": map[string]any{"availability": "disabled"}}).want(t, 200)
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string)))); got["order.offer_id"] != "not_sellable" {
			t.Errorf("disabled offer: %v", got)
		}
		// An expired offer cannot be sold.
		b.call("PATCH", "/external_api/v1/offers/"+offer["id"].(string), map[string]any{"offer": map[string]any{"availability": "enabled", "expires_at": "2026-11-22T00:00:00-03:00"}}).want(t, 200)
		b.clock.Advance(48 * 60 * 60 * 1e9)
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string)))); got["order.offer_id"] != "not_sellable" {
			t.Errorf("expired offer: %v", got)
		}
		// null removes the expiry and the seat limit; a field left out keeps its value.
		kept := b.call("PATCH", "/external_api/v1/offers/"+offer["id"].(string), map[string]any{"offer": map[string]any{"name": "Turma aberta"}}).want(t, 200).JSON(t)
		if kept["expires_at"] == nil || kept["seats"] != float64(30) {
			t.Fatalf("a patch without them changed the expiry or the seats: %v, %v", kept["expires_at"], kept["seats"])
		}
		cleared := b.call("PATCH", "/external_api/v1/offers/"+offer["id"].(string), map[string]any{"offer": map[string]any{"expires_at": nil, "seats": nil}}).want(t, 200).JSON(t)
		if cleared["expires_at"] != nil || cleared["seats"] != nil {
			t.Fatalf("null kept the expiry or the seats: %v, %v", cleared["expires_at"], cleared["seats"])
		}
		if again := b.call("GET", "/external_api/v1/offers/"+offer["id"].(string), nil).want(t, 200).JSON(t); again["expires_at"] != nil || again["seats"] != nil {
			t.Fatalf("read back: %v, %v", again["expires_at"], again["seats"])
		}
		// exclude_from_campaign is stored as a PATCH sets it (it was answered
		// 200 and left as it was), and kept by a PATCH that leaves it out.
		excluded := b.call("PATCH", "/external_api/v1/offers/"+offer["id"].(string), map[string]any{"offer": map[string]any{"exclude_from_campaign": true}}).want(t, 200).JSON(t)
		if excluded["exclude_from_campaign"] != true {
			t.Fatalf("exclude_from_campaign not set: %v", excluded["exclude_from_campaign"])
		}
		b.call("PATCH", "/external_api/v1/offers/"+offer["id"].(string), map[string]any{"offer": map[string]any{"name": "Turma"}}).want(t, 200)
		if again := b.call("GET", "/external_api/v1/offers/"+offer["id"].(string), nil).want(t, 200).JSON(t); again["exclude_from_campaign"] != true {
			t.Fatalf("exclude_from_campaign read back: %v", again["exclude_from_campaign"])
		}
		b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201)
	})
}

func TestOrderCancel(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, order := b.order()
		id := order["id"].(string)
		fieldCodes(t, b.call("POST", "/external_api/v1/orders/"+id+"/cancel", map[string]any{"reason": "bored"}))
		c := b.call("POST", "/external_api/v1/orders/"+id+"/cancel", map[string]any{"reason": "customer_dropout"}).want(t, 200).JSON(t)
		if c["status"] != "canceled" || c["cancelation_reason"] != "customer_dropout" {
			t.Fatalf("canceled order %v", c)
		}
		r := b.call("POST", "/external_api/v1/orders/"+id+"/cancel", nil).want(t, 409)
		if r.JSON(t)["code"] != "invalid_state" {
			t.Fatalf("second cancel %s", r.Body)
		}
		events, err := b.db.Events(t.Context(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, id)
		if err != nil || len(events) != 1 || events[0].Event != "canceled" || events[0].Entity != "order" {
			t.Fatalf("events %+v %v", events, err)
		}
	})
}

// Another company's ids and the other environment's ids are 404, exactly
// like missing ones, and lists never show them.
func TestIsolation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		pid := offer["product"].(map[string]any)["id"].(string)
		paths := []string{"/external_api/v1/products/" + pid, "/external_api/v1/offers/" + offer["id"].(string), "/external_api/v1/orders/" + order["id"].(string)}
		missing := b.send(b.sandbox.URL, b.token, "GET", "/external_api/v1/orders/0195a3f0-0000-7000-8000-000000000000", nil, nil).want(t, 404).JSON(t)
		for _, p := range paths {
			for name, r := range map[string]resp{
				"other company":     b.send(b.sandbox.URL, b.otherToken, "GET", p, nil, nil),
				"other environment": b.send(b.production.URL, b.prodToken, "GET", p, nil, nil),
			} {
				r.want(t, 404)
				if got := r.JSON(t); got["code"] != missing["code"] || !strings.HasSuffix(got["detail"].(string), "not found") {
					t.Errorf("%s %s: %v", name, p, got)
				}
			}
		}
		b.send(b.sandbox.URL, b.otherToken, "POST", "/external_api/v1/orders/"+order["id"].(string)+"/cancel", nil, nil).want(t, 404)
		b.send(b.sandbox.URL, b.otherToken, "PATCH", "/external_api/v1/products/"+pid, map[string]any{"product": map[string]any{"name": "x"}}, nil).want(t, 404)
		// Someone else's product cannot back an offer, nor their offer an order.
		if got := fieldCodes(t, b.send(b.sandbox.URL, b.otherToken, "POST", "/external_api/v1/offers", offerBody(pid), nil)); got["offer.product_id"] != "not_found" {
			t.Errorf("foreign product: %v", got)
		}
		if got := fieldCodes(t, b.send(b.production.URL, b.prodToken, "POST", "/external_api/v1/orders", orderBody(offer["id"].(string)), nil)); got["order.offer_id"] != "not_found" {
			t.Errorf("other environment's offer: %v", got)
		}
		for _, path := range []string{"/external_api/v1/products", "/external_api/v1/offers"} {
			for name, r := range map[string]resp{
				"other company":     b.send(b.sandbox.URL, b.otherToken, "GET", path, nil, nil),
				"other environment": b.send(b.production.URL, b.prodToken, "GET", path, nil, nil),
			} {
				if got := r.want(t, 200).JSON(t); got["total_items"] != float64(0) {
					t.Errorf("%s lists foreign rows at %s: %v", name, path, got)
				}
			}
		}
	})
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		key := map[string]string{"Idempotency-Key": "create-" + sqldbtest.Suffix()}
		first := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", productBody(), key).want(t, 201)
		again := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", productBody(), key).want(t, 201)
		if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay differs:\n%s\n%s", first.Body, again.Body)
		}
		other := productBody()
		other["product"].(map[string]any)["name"] = "Outro"
		if r := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", other, key).want(t, 422); r.JSON(t)["code"] != "idempotency_key_reused" {
			t.Fatalf("different body: %s", r.Body)
		}
		// Validation failures are stored and replayed too.
		bad := map[string]string{"Idempotency-Key": "bad-" + sqldbtest.Suffix()}
		r1 := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", map[string]any{"product": map[string]any{}}, bad).want(t, 422)
		r2 := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", map[string]any{"product": map[string]any{}}, bad).want(t, 422)
		if r2.Header.Get("Idempotent-Replayed") != "true" || r1.JSON(t)["request_id"] != r2.JSON(t)["request_id"] {
			t.Fatalf("422 not replayed")
		}

		// Concurrent requests with one key create exactly one product.
		conc := map[string]string{"Idempotency-Key": "race-" + sqldbtest.Suffix()}
		b.skipContract = true // 409s of in-flight requests are checked below
		var wg sync.WaitGroup
		statuses := make([]int, 20)
		bodies := make([]string, 20)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", productBody(), conc)
				statuses[i], bodies[i] = r.Status, string(r.Body)
			}()
		}
		wg.Wait()
		created := ""
		for i, s := range statuses {
			switch s {
			case 201:
				if created == "" {
					created = bodies[i]
				} else if bodies[i] != created {
					t.Fatalf("two different products for one key")
				}
			case 409:
				if !strings.Contains(bodies[i], "idempotency_in_flight") {
					t.Fatalf("409 body %s", bodies[i])
				}
			default:
				t.Fatalf("status %d: %s", s, bodies[i])
			}
		}
		list := b.call("GET", "/external_api/v1/products", nil).want(t, 200).JSON(t)
		if list["total_items"] != float64(2) {
			t.Fatalf("want 2 products (the first and the race winner; none from 422s), got %v", list["total_items"])
		}
	})
}

// A PATCH or a DELETE sent again with its Idempotency-Key (its answer lost
// on the way) gets its first answer again, where the key was read on POST
// alone: a webhook's DELETE whose 204 was lost answered its retry 404, and a
// waiver that paid a bill answered its retry 409.
func TestIdempotentPatchAndDelete(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		hook := b.call("POST", "/external_api/v1/webhooks", map[string]any{"name": "ERP", "url": "https://hooks.example.com/x",
			"entity": "bill", "events": []string{"paid"}, "verb": "post"}).want(t, 201).JSON(t)
		path := "/external_api/v1/webhooks/" + hook["id"].(string)
		patch := map[string]string{"Idempotency-Key": "patch-" + sqldbtest.Suffix()}
		first := b.send(b.sandbox.URL, b.token, "PATCH", path, map[string]any{"name": "ERP 2"}, patch).want(t, 200)
		again := b.send(b.sandbox.URL, b.token, "PATCH", path, map[string]any{"name": "ERP 2"}, patch).want(t, 200)
		if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("PATCH replay:\n%s\n%s", first.Body, again.Body)
		}
		if r := b.send(b.sandbox.URL, b.token, "PATCH", path, map[string]any{"name": "ERP 3"}, patch).want(t, 422); r.JSON(t)["code"] != "idempotency_key_reused" {
			t.Fatalf("the key with another body: %s", r.Body)
		}
		del := map[string]string{"Idempotency-Key": "delete-" + sqldbtest.Suffix()}
		b.send(b.sandbox.URL, b.token, "DELETE", path, nil, del).want(t, 204)
		if r := b.send(b.sandbox.URL, b.token, "DELETE", path, nil, del).want(t, 204); r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatal("DELETE not replayed")
		}
		b.call("DELETE", path, nil).want(t, 404) // without the key it runs again
	})
}

// An Idempotency-Key is text, counted in characters as the API documents
// it: a header of bytes that are not UTF-8 (HTTP lets a client send them)
// is refused before it reaches the database, where PostgreSQL refused to
// store it and the request answered 500; 255 accented letters are a key.
// A line separator or a direction override is refused as in every other
// line of text, and the reference says so (it said "control characters"
// alone, which neither is).
func TestIdempotencyKeyIsText(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for _, key := range []string{"\xff\xfe", "a\tb", "a\u2028b", "a\u202eb", strings.Repeat("é", 256)} {
			r := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", productBody(), map[string]string{"Idempotency-Key": key})
			if got := fieldCodes(t, r.want(t, 422)); got["Idempotency-Key"] == "" {
				t.Fatalf("key %q: %s", key, r.Body)
			}
		}
		key := map[string]string{"Idempotency-Key": strings.Repeat("é", 255)}
		first := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", productBody(), key).want(t, 201)
		again := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/products", productBody(), key).want(t, 201)
		if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("a key of 255 characters was not kept:\n%s\n%s", first.Body, again.Body)
		}
	})
}

// An Idempotency-Key sent on two header lines is refused naming it: the
// first counted, so a client whose middleware added a key of its own
// before the one it meant retried under a key it never chose, and the
// retry ran again; an empty first line made the request run without any
// key at all.
func TestIdempotencyKeySentTwiceIsRefused(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for _, keys := range [][]string{{"first-" + sqldbtest.Suffix(), "second-" + sqldbtest.Suffix()}, {"", "only-" + sqldbtest.Suffix()}} {
			raw, _ := json.Marshal(productBody())
			req, err := http.NewRequest("POST", b.sandbox.URL+"/external_api/v1/products", bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+b.token)
			req.Header.Set("Content-Type", "application/json")
			for _, k := range keys {
				req.Header.Add("Idempotency-Key", k)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if got := fieldCodes(t, resp{res.StatusCode, res.Header, body}); got["Idempotency-Key"] != "invalid" {
				t.Fatalf("keys %q: %s", keys, body)
			}
		}
	})
}

var _ = sqldb.SQLite

// Counts are refused past what a product or an offer takes, alike on both
// engines: PostgreSQL stores them in 32 bits, and a larger one failed its
// write with a 500. At the limit they are taken and read back.
func TestCountsAtTheirLimits(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		body := productBody()
		body["product"].(map[string]any)["duration_in_days"] = parcela.MaxDurationDays + 1
		body["product"].(map[string]any)["duration_in_hours"] = 1 << 31
		got := fieldCodes(t, b.call("POST", "/external_api/v1/products", body))
		if got["product.duration_in_days"] != "too_large" || got["product.duration_in_hours"] != "too_large" {
			t.Fatalf("durations past their limits: %v", got)
		}
		body["product"].(map[string]any)["duration_in_days"] = parcela.MaxDurationDays
		body["product"].(map[string]any)["duration_in_hours"] = parcela.MaxDurationHours
		product := b.call("POST", "/external_api/v1/products", body).want(t, 201).JSON(t)
		if product["duration_in_days"] != float64(parcela.MaxDurationDays) || product["duration_in_hours"] != float64(parcela.MaxDurationHours) {
			t.Fatalf("durations at their limits: %v, %v", product["duration_in_days"], product["duration_in_hours"])
		}
		offer := offerBody(product["id"].(string))
		offer["offer"].(map[string]any)["seats"] = int64(1) << 31
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/offers", offer)); got["offer.seats"] != "too_large" {
			t.Fatalf("seats past the limit: %v", got)
		}
		offer["offer"].(map[string]any)["seats"] = parcela.MaxSeats
		created := b.call("POST", "/external_api/v1/offers", offer).want(t, 201).JSON(t)
		id := created["id"].(string)
		if got := fieldCodes(t, b.call("PATCH", "/external_api/v1/offers/"+id, map[string]any{"offer": map[string]any{"seats": parcela.MaxSeats + 1}})); got["offer.seats"] != "too_large" {
			t.Fatalf("patched seats past the limit: %v", got)
		}
		if again := b.call("GET", "/external_api/v1/offers/"+id, nil).want(t, 200).JSON(t); again["seats"] != float64(parcela.MaxSeats) {
			t.Fatalf("seats at the limit: %v", again["seats"])
		}
	})
}

// Instants the API could not write back as they were sent are refused: a
// five-digit São Paulo year, or a date before 1914, whose São Paulo offset
// had seconds.
func TestInstantsAtTheirLimits(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		id := offer["id"].(string)
		// "+10000-…" is not an RFC 3339 timestamp at all.
		for sent, code := range map[string]string{"9999-12-31T23:59:59.999999999-23:59": "too_large", "+10000-01-01T00:00:00Z": "invalid"} {
			r := b.call("PATCH", "/external_api/v1/offers/"+id, map[string]any{"offer": map[string]any{"expires_at": sent}})
			if got := fieldCodes(t, r); got["offer.expires_at"] != code {
				t.Fatalf("expires_at %s: %v", sent, got)
			}
		}
		last := b.call("PATCH", "/external_api/v1/offers/"+id, map[string]any{"offer": map[string]any{"expires_at": "9999-12-31T23:59:59.999-03:00"}}).want(t, 200).JSON(t)
		if last["expires_at"] != "9999-12-31T23:59:59.999-03:00" {
			t.Fatalf("the last instant read back as %v", last["expires_at"])
		}
		_, fin := configs(offer)
		charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
		bill := "/external_api/v1/bills/" + billIDs(charged)[1]
		// The first instant is 2000-01-01T00:00:00-03:00, as the contract
		// says; São Paulo's midnight that day, in daylight saving, is an
		// hour earlier, and was the bound.
		for sent, code := range map[string]string{"9999-12-31T23:59:59.999999999-23:59": "too_large", "1900-01-01T00:00:00Z": "too_small",
			"1999-12-31T23:59:59.999-03:00": "too_small", "2027-01-01T00:00:00+24:00": "invalid"} {
			if got := fieldCodes(t, b.call("PATCH", bill, map[string]any{"bill": map[string]any{"disable_penalties_until": sent}})); got["bill.disable_penalties_until"] != code {
				t.Fatalf("disable_penalties_until %s: %v", sent, got)
			}
		}
		first := b.call("PATCH", bill, map[string]any{"bill": map[string]any{"disable_penalties_until": "2000-01-01T00:00:00-03:00"}}).want(t, 200).JSON(t)
		if first["disable_penalties_until"] != "2000-01-01T01:00:00.000-02:00" {
			t.Fatalf("the first instant read back as %v", first["disable_penalties_until"])
		}
		// Cut to the millisecond before it is checked, as an offer's
		// expiry is: the last instant with a fraction past it (an audit).
		waived := b.call("PATCH", bill, map[string]any{"bill": map[string]any{"disable_penalties_until": "9999-12-31T23:59:59.9991-03:00"}}).want(t, 200).JSON(t)
		if waived["disable_penalties_until"] != "9999-12-31T23:59:59.999-03:00" {
			t.Fatalf("the last instant read back as %v", waived["disable_penalties_until"])
		}
	})
}

// Lengths count characters, as the API documents them (JSON Schema's
// maxLength), not the bytes of their UTF-8: 255 accented letters are a
// name, 256 are too long.
func TestLengthsCountCharacters(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		body := productBody()
		body["product"].(map[string]any)["name"] = strings.Repeat("é", 256)
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/products", body)); got["product.name"] != "too_long" {
			t.Fatalf("256 characters: %v", got)
		}
		body["product"].(map[string]any)["name"] = strings.Repeat("é", 255)
		product := b.call("POST", "/external_api/v1/products", body).want(t, 201).JSON(t)
		offer := offerBody(product["id"].(string))
		offer["offer"].(map[string]any)["name"] = strings.Repeat("ç", 255)
		if got := b.call("POST", "/external_api/v1/offers", offer).want(t, 201).JSON(t); got["name"] != strings.Repeat("ç", 255) {
			t.Fatalf("offer name read back as %q", got["name"])
		}
	})
}

// An expiry within the millisecond the offer is created or patched in is
// that millisecond, the one stored and shown: not in the future. It was
// answered 201 with expires_at equal to created_at, an offer that had
// already stopped selling.
func TestOfferExpiryWithinTheMillisecondNow(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		p := b.product()
		now := b.clock.Now()
		body := offerBody(p["id"].(string))
		body["offer"].(map[string]any)["expires_at"] = now.Add(500 * time.Microsecond).Format(time.RFC3339Nano)
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/offers", body)); got["offer.expires_at"] != "in_past" {
			t.Fatalf("create: %v", got)
		}
		offer := b.offer()
		patch := map[string]any{"offer": map[string]any{"expires_at": now.Add(999 * time.Microsecond).Format(time.RFC3339Nano)}}
		if got := fieldCodes(t, b.call("PATCH", "/external_api/v1/offers/"+offer["id"].(string), patch)); got["offer.expires_at"] != "in_past" {
			t.Fatalf("patch: %v", got)
		}
		// The next millisecond is in the future, and sells until it comes.
		body["offer"].(map[string]any)["expires_at"] = now.Add(time.Millisecond).Format(time.RFC3339Nano)
		next := b.call("POST", "/external_api/v1/offers", body).want(t, 201).JSON(t)
		b.call("POST", "/external_api/v1/orders", orderBody(next["id"].(string))).want(t, 201)
	})
}

// An offer's ways to pay cannot change, as its amount and product cannot:
// payment_configurations in a PATCH, inside offer or beside it as at the
// creation, is 422 not_allowed, where it was answered 200 and ignored, so a
// client believed the offer's configurations replaced.
func TestOfferPatchRefusesPaymentConfigurations(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer := b.offer()
		path := "/external_api/v1/offers/" + offer["id"].(string)
		configs := []any{map[string]any{"payment_type": "upfront", "payment_methods": []string{"pix"}}}
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"offer": map[string]any{"name": "Turma nova", "payment_configurations": configs}}, "offer.payment_configurations"},
			{map[string]any{"offer": map[string]any{"payment_configurations": []any{}}}, "offer.payment_configurations"},
			{map[string]any{"offer": map[string]any{"name": "Turma nova"}, "payment_configurations": configs}, "payment_configurations"},
		} {
			if got := fieldCodes(t, b.call("PATCH", path, c.body)); got[c.field] != "not_allowed" {
				t.Errorf("%v: %v, want %s not_allowed", c.body, got, c.field)
			}
		}
		got := b.call("GET", path, nil).want(t, 200).JSON(t)
		if got["name"] != offer["name"] || len(got["payment_configurations"].([]any)) != len(offer["payment_configurations"].([]any)) {
			t.Fatalf("a refused patch changed the offer: %v", got)
		}
	})
}
