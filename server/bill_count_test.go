package server_test

import (
	"context"
	"net/url"
	"testing"
)

// total_items comes from per-hour counts kept by triggers and folded by
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
