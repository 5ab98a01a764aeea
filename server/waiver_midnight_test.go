package server_test

import (
	"testing"

	"parcela/sqldb"
)

// Through the API: a late installment whose penalties are waived "until"
// the first instant of a day owes interest for that day, the whole of it
// after the waiver ("no penalties before this moment"), as the same
// waiver written as the day before's 23:59:59.999 does. It owed none: a
// millisecond of waiver took a day of interest off the bill (an audit).
func TestWaiverUntilMidnightOverTheAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, sqldb.SQLite)
	offer := b.offer()
	_, fin := configs(offer)
	current := map[string]int64{}
	for _, until := range []string{"2027-01-12T23:59:59.999-03:00", "2027-01-13T00:00:00.000-03:00"} {
		b.clock.Set(start)
		order := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
		ids := billIDs(b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t))
		b.pay(t, openPayment(t, b.bill(t, ids[0]))["id"].(string))
		inst := b.bill(t, ids[1])
		if inst["due_date"] != "2027-01-10T23:59:59.999-03:00" {
			t.Fatalf("installment 1 due %v", inst["due_date"])
		}
		b.at(t, "2027-01-01 10:00") // its boleto is issued
		b.at(t, "2027-01-14 10:00") // late: due Sunday 10, payable through Monday 11
		b.call("PATCH", "/external_api/v1/bills/"+ids[1], map[string]any{"bill": map[string]any{"disable_penalties_until": until}}).want(t, 200)
		got := b.bill(t, ids[1])
		current[until] = cents(got["current_amount_cents"])
		t.Logf("waived until %s: original %v current %v status %v", until, got["original_amount_cents"], got["current_amount_cents"], got["status"])
		orig := cents(got["original_amount_cents"])
		// Late on 13 and 14 January either way (the whole of both days after the waiver).
		if want := latePrice(orig, 2); current[until] != want {
			t.Errorf("waived until %s, on 14 January: current_amount_cents %d, want %d (fine + 2 days' interest)", until, current[until], want)
		}
	}
}
