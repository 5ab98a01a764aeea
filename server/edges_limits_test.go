package server_test

import (
	"encoding/json"
	"testing"
)

// Inputs at the limits of their types are answered with a problem naming
// the field (400 when it is no value of its type, 422 when out of bounds),
// never a 500 or a value cut or wrapped: pages and dates in the bills'
// filter, amounts past int64 and past a boleto's, installment counts and
// due days past theirs, and names with NUL, invalid UTF-8 and a lone
// surrogate; a name of combining marks within its length is kept as sent.
func TestInputsAtTheirTypesLimits(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		problem := func(r resp, status int, field string) {
			t.Helper()
			r.want(t, status)
			p := r.JSON(t)
			if field == "" {
				return
			}
			errs, _ := p["errors"].([]any)
			for _, e := range errs {
				if e.(map[string]any)["field"] == field {
					return
				}
			}
			t.Errorf("%d problem without field %s: %v", status, field, p)
		}
		for q, want := range map[string]struct {
			status int
			field  string
		}{
			"per_page=0": {422, "per_page"}, "per_page=-1": {422, "per_page"}, "per_page=1001": {422, "per_page"},
			"per_page=9223372036854775807": {422, "per_page"}, "per_page=9223372036854775808": {422, "per_page"},
			"page=0": {422, "page"}, "page=100001": {422, "page"}, "page=-9223372036854775809": {422, "page"}, "page=1e3": {400, "page"},
			"due_date_start=2027-01-02&due_date_end=2027-01-01": {422, "due_date_end"}, "due_date_end=2027-02-29": {400, "due_date_end"},
			"due_date_start=9999-12-32": {400, "due_date_start"},
		} {
			problem(b.call("GET", "/external_api/v1/bills?"+q, nil), want.status, want.field)
		}
		for _, q := range []string{"page=100000&per_page=1000", "due_date_start=0001-01-01", "due_date_end=9999-12-31",
			"due_date_start=9999-12-31&due_date_end=9999-12-31", "due_date_start=0001-01-01&due_date_end=0001-01-01", "due_date_end=2028-02-29"} {
			if page := b.call("GET", "/external_api/v1/bills?"+q, nil).want(t, 200).JSON(t); page["total_items"].(float64) != 0 {
				t.Errorf("%s: %v", q, page)
			}
		}

		for price, want := range map[string]int{"9223372036854775807": 422, "9223372036854775808": 422, "-9223372036854775808": 422,
			"1e19": 400, "10000000000": 422, "1.5": 400} {
			body := productBody()
			body["product"].(map[string]any)["full_amount_cents"] = json.Number(price)
			problem(b.call("POST", "/external_api/v1/products", body), want, "product.full_amount_cents")
		}
		product := func(name string) string {
			return `{"product":{"name":"` + name + `","full_amount_cents":1000,"kind":"course","access_period":"days","duration_in_days":1}}`
		}
		problem(b.call("POST", "/external_api/v1/products", product("X\xff\xfeY")), 400, "")
		problem(b.call("POST", "/external_api/v1/products", product(`X\ud800Y`)), 400, "")
		problem(b.call("POST", "/external_api/v1/products", product(`X\u0000Y`)), 422, "product.name")

		offer := b.offer()
		_, fin := configs(offer)
		combining := "e"
		for range 40 {
			combining += "\u0301"
		}
		body := orderBody(offer["id"].(string))
		body["order"].(map[string]any)["customer_name"] = combining
		if got := b.call("POST", "/external_api/v1/orders", body).want(t, 201).JSON(t)["customer_name"]; got != combining {
			t.Errorf("customer name of combining marks kept as %q", got)
		}
		charge := func(key string, v any) resp {
			order := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
			c := chargeBody(fin, "boleto", 3)
			c[key] = v
			return b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", c)
		}
		for _, n := range []any{0, -1, 13, json.Number("4294967298"), json.Number("9223372036854775807")} {
			problem(charge("installments", n), 422, "installments")
		}
		problem(charge("installments", json.Number("9223372036854775808")), 422, "installments")
		for _, d := range []any{0, -1, 32, json.Number("4294967306")} {
			problem(charge("due_day", d), 422, "due_day")
		}
		charge("installments", 12).want(t, 200)
		charge("due_day", 31).want(t, 200)
	})
}
