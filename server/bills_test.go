package server_test

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
)

func TestListBills(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		// Two financed orders: 4 + 3 bills; the first down payment paid.
		offer, o1 := b.order()
		_, fin := configs(offer)
		c1 := b.call("POST", "/external_api/v1/orders/"+o1["id"].(string)+"/charge", chargeBody(fin, "boleto", 4)).want(t, 200).JSON(t)
		o2 := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
		body := chargeBody(fin, "pix", 3)
		body["due_day"] = 25
		c2 := b.call("POST", "/external_api/v1/orders/"+o2["id"].(string)+"/charge", body).want(t, 200).JSON(t)
		bills1, bills2 := billIDs(c1), billIDs(c2)
		b.at(t, "2026-11-23 11:00")
		b.pay(t, openPayment(t, b.bill(t, bills1[0]))["id"].(string))
		billing1 := c1["billings"].([]any)[0].(map[string]any)["id"].(string)

		list := func(q string) map[string]any {
			t.Helper()
			return b.call("GET", "/external_api/v1/bills?"+q, nil).want(t, 200).JSON(t)
		}
		ids := func(page map[string]any) []string {
			var out []string
			for _, r := range page["results"].([]any) {
				out = append(out, r.(map[string]any)["id"].(string))
			}
			return out
		}
		count := func(q string) int { return int(list(q)["total_items"].(float64)) }

		all := list("")
		if all["total_items"] != float64(7) || all["total_pages"] != float64(1) {
			t.Fatalf("all bills: %v %v", all["total_items"], all["total_pages"])
		}
		// Ordered by due date, then id.
		var dues []string
		for _, r := range all["results"].([]any) {
			dues = append(dues, r.(map[string]any)["due_date"].(string))
		}
		if !sort.StringsAreSorted(dues) {
			t.Fatalf("not ordered by due date: %v", dues)
		}
		for q, want := range map[string]int{
			"billing_id=" + billing1:        4,
			"order_id=" + o2["id"].(string): 3,
			"status=paid":                   1,
			"status=pending":                6,
			"status=overdue":                0,
			"due_date_start=2026-12-01&due_date_end=2026-12-31":                      1, // Dec 25 (due day 10 waits for Jan 10: a month after the down payment)
			"due_date_start=2027-01-10&due_date_end=2027-01-10":                      1, // inclusive end, São Paulo days
			"due_date_end=2026-11-30":                                                2, // the two down payments
			"paid_at_start=2026-11-23&paid_at_end=2026-11-23":                        1,
			"paid_at_start=2026-11-24":                                               0,
			"status=pending&billing_id=" + billing1:                                  3,
			"status=pending&due_date_start=2027-01-01&order_id=" + o2["id"].(string): 1,
			"billing_id=" + billing1 + "&paid_at_end=2026-11-30&status=paid":         1,
		} {
			if got := count(q); got != want {
				t.Errorf("%s: %d bills, want %d", q, got, want)
			}
		}
		// Page boundaries: 7 bills, 3 a page.
		p1, p2, p3, p4 := list("per_page=3&page=1"), list("per_page=3&page=2"), list("per_page=3&page=3"), list("per_page=3&page=4")
		if p1["total_pages"] != float64(3) || len(ids(p1)) != 3 || len(ids(p2)) != 3 || len(ids(p3)) != 1 || len(ids(p4)) != 0 || p4["total_items"] != float64(7) {
			t.Fatalf("pages: %d %d %d %d (total pages %v)", len(ids(p1)), len(ids(p2)), len(ids(p3)), len(ids(p4)), p1["total_pages"])
		}
		seen := map[string]bool{}
		for _, id := range append(append(ids(p1), ids(p2)...), ids(p3)...) {
			if seen[id] {
				t.Fatalf("bill %s on two pages", id)
			}
			seen[id] = true
		}
		list("per_page=1000")
		for q, field := range map[string]string{"per_page=1001": "per_page", "page=0": "page", "status=late": "status"} {
			if got := fieldCodes(t, b.call("GET", "/external_api/v1/bills?"+q, nil)); got[field] == "" {
				t.Errorf("%s: %v", q, got)
			}
		}
		for q, field := range map[string]string{"due_date_start=2026-13-01": "due_date_start", "paid_at_end=yesterday": "paid_at_end", "per_page=ten": "per_page"} {
			r := b.call("GET", "/external_api/v1/bills?"+q, nil).want(t, 400)
			if p := r.JSON(t); p["errors"].([]any)[0].(map[string]any)["field"] != field {
				t.Errorf("%s: %s", q, r.Body)
			}
		}
		// Foreign and other-environment bills are never listed or read.
		for name, r := range map[string]resp{
			"other company":     b.send(b.sandbox.URL, b.otherToken, "GET", "/external_api/v1/bills?billing_id="+url.QueryEscape(billing1), nil, nil),
			"other environment": b.send(b.production.URL, b.prodToken, "GET", "/external_api/v1/bills", nil, nil),
		} {
			if got := r.want(t, 200).JSON(t); got["total_items"] != float64(0) {
				t.Errorf("%s sees %v bills", name, got["total_items"])
			}
		}
		for _, id := range bills2 {
			b.send(b.sandbox.URL, b.otherToken, "GET", "/external_api/v1/bills/"+id, nil, nil).want(t, 404)
			b.send(b.production.URL, b.prodToken, "GET", "/external_api/v1/bills/"+id, nil, nil).want(t, 404)
		}
		_ = fmt.Sprint
	})
}

// A listing's query means one thing or is refused: a parameter sent twice
// (which would count?) is 400 naming it, and so is any parameter of a
// listing whose query is not key=value pairs joined by & (Go's parser
// drops a pair with a stray % or a ';' and everything after it on the same
// pair, so "status=paid;page=2" listed every status).
func TestListingQueriesAreUnambiguous(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for q, field := range map[string]string{
			"/external_api/v1/bills?status=paid&status=pending":                      "status",
			"/external_api/v1/bills?page=1&page=2":                                   "page",
			"/external_api/v1/bills?per_page=5&per_page=5":                           "per_page",
			"/external_api/v1/bills?billing_id=a&billing_id=b":                       "billing_id",
			"/external_api/v1/bills?order_id=a&order_id=b":                           "order_id",
			"/external_api/v1/bills?due_date_end=2026-12-01&due_date_end=2026-12-02": "due_date_end",
			"/external_api/v1/products?page=1&page=1":                                "page",
			"/external_api/v1/offers?per_page=1&per_page=2":                          "per_page",
			"/external_api/v1/webhook_deliveries?webhook_id=a&webhook_id=b":          "webhook_id",
		} {
			r := b.call("GET", q, nil).want(t, 400)
			if p := r.JSON(t); p["code"] != "malformed_request" || len(p["errors"].([]any)) != 1 || p["errors"].([]any)[0].(map[string]any)["field"] != field {
				t.Errorf("%s: %s", q, r.Body)
			}
		}
		for _, q := range []string{"/external_api/v1/bills?status=paid;page=2", "/external_api/v1/bills?status=%zz",
			"/external_api/v1/products?page=%2", "/external_api/v1/webhook_deliveries?webhook_id=x;y"} {
			if p := b.call("GET", q, nil).want(t, 400).JSON(t); p["code"] != "malformed_request" {
				t.Errorf("%s: %v", q, p)
			}
		}
		// An empty pair is no parameter; an empty value is refused, as a
		// client whose variable was unset would otherwise list every bill.
		b.call("GET", "/external_api/v1/bills?&status=paid&page=1&", nil).want(t, 200)
		for _, q := range []string{"billing_id=", "order_id=", "status=", "due_date_start=", "due_date_end=",
			"paid_at_start=", "paid_at_end=", "page=", "per_page="} {
			p := b.call("GET", "/external_api/v1/bills?"+q, nil).want(t, 400).JSON(t)
			errs, _ := p["errors"].([]any)
			if p["code"] != "malformed_request" || len(errs) != 1 || errs[0].(map[string]any)["field"] != strings.TrimSuffix(q, "=") {
				t.Errorf("%s: %v", q, p)
			}
		}
		b.call("GET", "/external_api/v1/webhook_deliveries?webhook_id=", nil).want(t, 400)
	})
}

// A date range's end is inclusive, so an end one day before its start is
// reversed as much as one a month before it: both are refused, and a range
// of one day (start == end) is not.
func TestListBillsRefusesAReversedRangeByOneDay(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for q, field := range map[string]string{
			"due_date_start=2026-12-02&due_date_end=2026-12-01": "due_date_end",
			"due_date_start=2027-01-01&due_date_end=2026-12-31": "due_date_end",
			"due_date_start=2026-12-31&due_date_end=2026-11-30": "due_date_end",
			"paid_at_start=2026-03-01&paid_at_end=2026-02-28":   "paid_at_end",
		} {
			if got := fieldCodes(t, b.call("GET", "/external_api/v1/bills?"+q, nil)); got[field] != "invalid" || len(got) != 1 {
				t.Errorf("%s: field errors %v, want %s invalid", q, got, field)
			}
		}
		for _, q := range []string{"due_date_start=2026-12-01&due_date_end=2026-12-01", "paid_at_start=2026-02-28&paid_at_end=2026-02-28"} {
			b.call("GET", "/external_api/v1/bills?"+q, nil).want(t, 200)
		}
	})
}

// A date filter's day is the São Paulo calendar day whole, also on a day
// whose midnight daylight saving skipped (4 November 2018 began at 01:00,
// UTC−2): the day before ends at its 23:59:59.999, UTC−3, where an
// installment of that day is due.
func TestListBillsDaysAcrossDaylightSaving(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.at(t, "2018-09-20 10:00")
		offer, o := b.order()
		_, fin := configs(offer)
		body := chargeBody(fin, "boleto", 3)
		body["due_day"] = 3
		b.call("POST", "/external_api/v1/orders/"+o["id"].(string)+"/charge", body).want(t, 200)
		dues := map[string]bool{}
		for _, bill := range billsOf(b.call("GET", "/external_api/v1/bills", nil).want(t, 200).JSON(t)) {
			dues[bill["due_date"].(string)] = true
		}
		if len(dues) != 3 || !dues["2018-11-03T23:59:59.999-03:00"] || !dues["2018-12-03T23:59:59.999-02:00"] {
			t.Fatalf("no installment due at the end of 3 November 2018: %v", dues)
		}
		for q, want := range map[string]int{
			"due_date_start=2018-11-03&due_date_end=2018-11-03": 1,
			"due_date_end=2018-11-03":                           2, // the down payment and installment 1
			"due_date_start=2018-11-04&due_date_end=2018-11-30": 0,
			"due_date_start=2018-11-04":                         1, // installment 2, on 3 December
		} {
			page := b.call("GET", "/external_api/v1/bills?per_page=1000&"+q, nil).want(t, 200).JSON(t)
			if got := len(page["results"].([]any)); got != want || page["total_items"] != float64(want) {
				t.Errorf("%s: %d bills (total_items %v), want %d", q, got, page["total_items"], want)
			}
		}
	})
}
