package server_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Each listing's reference names the order it answers in, and the server
// answers in it: products and offers newest first, webhooks oldest first
// (bills, by due date, and deliveries are checked with their filters). A
// client paging a listing whose order the document left unsaid could not
// tell where a product created meanwhile would appear.
func TestListingsAnswerTheOrderTheirReferenceNames(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		var products, offers, hooks []string
		for range 3 {
			p := b.product()
			products = append(products, p["id"].(string))
			o := b.call("POST", "/external_api/v1/offers", offerBody(p["id"].(string))).want(t, 201).JSON(t)
			offers = append(offers, o["id"].(string))
			h := map[string]any{"name": "ERP", "url": "https://erp.example.com/hooks", "entity": "bill", "events": []string{"paid"}, "verb": "post"}
			hooks = append(hooks, b.call("POST", "/external_api/v1/webhooks", h).want(t, 201).JSON(t)["id"].(string))
		}
		reversed := func(ids []string) []string {
			out := slices.Clone(ids)
			slices.Reverse(out)
			return out
		}
		idsOf := func(items []any) []string {
			var out []string
			for _, it := range items {
				out = append(out, it.(map[string]any)["id"].(string))
			}
			return out
		}
		for _, c := range []struct {
			op, path, order string
			want            []string
		}{
			{"listProducts", "/external_api/v1/products", "newest first", reversed(products)},
			{"listOffers", "/external_api/v1/offers", "newest first", reversed(offers)},
			{"listWebhooks", "/external_api/v1/webhooks", "oldest first", hooks},
		} {
			op := b.contract.Doc().Paths.Find(c.path).Get
			if op == nil || op.OperationID != c.op || !strings.Contains(op.Description, c.order) {
				t.Errorf("GET %s: its description does not say it lists %s", c.path, c.order)
			}
			r := b.call("GET", c.path, nil).want(t, 200)
			var got []string
			if c.op == "listWebhooks" {
				var items []any
				if err := json.Unmarshal(r.Body, &items); err != nil {
					t.Fatalf("webhooks: %v: %s", err, r.Body)
				}
				got = idsOf(items)
			} else {
				got = idsOf(r.JSON(t)["results"].([]any))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("GET %s listed %v, want %s %v", c.path, got, c.order, c.want)
			}
		}
	})
}

// A listing refuses a query parameter it does not take, naming it: a
// misspelt filter (due_date_from for due_date_start) was ignored, and the
// listing answered every bill as if it matched.
func TestListingsRefuseAParameterTheyDoNotTake(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for path, name := range map[string]string{
			"/external_api/v1/bills?due_date_from=2026-01-01&page=1": "due_date_from",
			"/external_api/v1/bills?status=paid&Status=pending":      "Status",
			"/external_api/v1/products?pages=2":                      "pages",
			"/external_api/v1/offers?product_id=x":                   "product_id",
			"/external_api/v1/webhook_deliveries?webhook=x":          "webhook",
			"/external_api/v1/webhooks?page=1":                       "page",
		} {
			p := b.call("GET", path, nil).want(t, 400).JSON(t)
			errs, _ := p["errors"].([]any)
			if p["code"] != "malformed_request" || len(errs) != 1 || errs[0].(map[string]any)["field"] != name ||
				errs[0].(map[string]any)["code"] != "not_allowed" {
				t.Errorf("GET %s: %v", path, p)
			}
		}
		// Every parameter a listing documents is taken.
		id := "d2046a63-e81c-44d9-956f-647ff2580bd2"
		b.call("GET", "/external_api/v1/bills?billing_id="+id+"&order_id="+id+"&status=paid&due_date_start=2026-01-01&due_date_end=2026-12-31&paid_at_start=2026-01-01&paid_at_end=2026-12-31&page=1&per_page=10", nil).want(t, 200)
		b.call("GET", "/external_api/v1/webhook_deliveries?page=1&per_page=10", nil).want(t, 200)
		b.call("GET", "/external_api/v1/webhooks", nil).want(t, 200)
		b.call("GET", "/external_api/v1/products?page=1&per_page=10", nil).want(t, 200)
	})
}
