package server_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// total_items comes from per-day counts kept by triggers and folded by
// CompactBillCounts. Through charges, payments, a cancelation, expiry and
// overdue sweeps, with and without compaction in between, every filter's
// total equals the number of bills its pages actually hold.
func TestBillCountsStayExact(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		filters := []string{"", "status=pending", "status=paid", "status=overdue", "status=canceled",
			"due_date_start=2026-12-01&due_date_end=2027-01-31", "status=pending&due_date_start=2027-01-01",
			"status=overdue&due_date_end=2026-12-31", "due_date_end=2026-11-30"}
		check := func(step string) {
			t.Helper()
			for _, q := range filters {
				page := b.call("GET", "/external_api/v1/bills?per_page=1000&"+q, nil).want(t, 200).JSON(t)
				if got, want := int(page["total_items"].(float64)), len(page["results"].([]any)); got != want {
					t.Errorf("%s, %q: total_items %d, but the listing holds %d bills", step, q, got, want)
				}
			}
			// Without a status the page merges each status's bills: the same
			// bills as the four statuses' listings, in due-date order, and
			// cut into pages of three the same as one page of all.
			for _, q := range []string{"", "due_date_start=2026-12-01&due_date_end=2027-01-31"} {
				all := billsOf(b.call("GET", "/external_api/v1/bills?per_page=1000&"+q, nil).want(t, 200).JSON(t))
				var statuses, paged []string
				for _, s := range []string{"pending", "paid", "overdue", "canceled"} {
					statuses = append(statuses, billIDsOf(billsOf(b.call("GET", "/external_api/v1/bills?per_page=1000&status="+s+"&"+q, nil).want(t, 200).JSON(t)))...)
				}
				for p := 1; p <= len(all)/3+1; p++ {
					paged = append(paged, billIDsOf(billsOf(b.call("GET", fmt.Sprintf("/external_api/v1/bills?per_page=3&page=%d&%s", p, q), nil).want(t, 200).JSON(t)))...)
				}
				ids := billIDsOf(all)
				if !slices.Equal(paged, ids) {
					t.Errorf("%s, %q: pages of three %v, one page %v", step, q, paged, ids)
				}
				if slices.Sort(statuses); !slices.Equal(statuses, slices.Sorted(slices.Values(ids))) {
					t.Errorf("%s, %q: the statuses' bills %v, the listing's %v", step, q, statuses, ids)
				}
				if !slices.IsSortedFunc(all, func(x, y map[string]any) int { return strings.Compare(x["due_date"].(string), y["due_date"].(string)) }) {
					t.Errorf("%s, %q: not in due-date order", step, q)
				}
			}
		}
		compact := func() {
			t.Helper()
			if _, err := b.db.CompactBillCounts(ctx); err != nil {
				t.Fatal(err)
			}
		}
		offer, o1 := b.order()
		upfront, fin := configs(offer)
		charge := func(orderID string, body map[string]any) map[string]any {
			return b.call("POST", "/external_api/v1/orders/"+orderID+"/charge", body).want(t, 200).JSON(t)
		}
		order := func() string {
			return b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)["id"].(string)
		}
		c1 := charge(o1["id"].(string), chargeBody(fin, "boleto", 4))
		c2 := charge(order(), chargeBody(fin, "pix", 3))
		check("charged, not compacted")
		compact()
		check("charged, compacted")
		charge(order(), chargeBody(upfront, "boleto", 1))
		b.pay(t, openPayment(t, b.bill(t, billIDs(c1)[0]))["id"].(string))
		b.pay(t, openPayment(t, b.bill(t, billIDs(c2)[0]))["id"].(string))
		check("paid, partly compacted")
		billing2 := c2["billings"].([]any)[0].(map[string]any)["id"].(string)
		b.call("POST", "/external_api/v1/billings/"+billing2+"/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}).want(t, 200)
		check("canceled")
		b.at(t, "2026-12-20 10:00") // the upfront boleto expires; installment 1 of c1 falls overdue
		check("swept")
		if err := b.db.RecountBills(ctx); err != nil {
			t.Fatal(err)
		}
		check("recounted from the bills")
		compact()
		check("swept, compacted")
		compact() // nothing to fold
		b.at(t, "2027-02-20 10:00")
		compact()
		check("months later, compacted")
		// Nothing of this company is left to fold (on PostgreSQL other tests'
		// companies share the table, so the count compaction returns is theirs too).
		var left int
		if err := b.db.SQLDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM bill_count_deltas WHERE company_id = '"+b.company.ID+"'").Scan(&left); err != nil || left != 0 {
			t.Fatalf("%d deltas left after compaction (%v), want 0", left, err)
		}
		// Another company's bills never count.
		other := b.send(b.sandbox.URL, b.otherToken, "GET", "/external_api/v1/bills?"+url.Values{}.Encode(), nil, nil).want(t, 200).JSON(t)
		if other["total_items"] != float64(0) {
			t.Fatalf("another company sees %v bills", other["total_items"])
		}
	})
}

func billsOf(page map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range page["results"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

func billIDsOf(bills []map[string]any) []string {
	ids := []string{}
	for _, bill := range bills {
		ids = append(ids, bill["id"].(string))
	}
	return ids
}
