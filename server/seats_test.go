package server_test

import "testing"

// An order canceled or expired gives its seat back, as seats_taken counts
// the orders charged and not canceled: it kept the seat, so orders left
// unpaid (anyone can start one on the offer's page) sold the offer out.
// A seat limit set later counts only the orders not canceled.
func TestCanceledOrdersGiveTheirSeatBack(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer := b.offer()
		oid := offer["id"].(string)
		_, fin := configs(offer)
		taken := func() any {
			return b.call("GET", "/external_api/v1/offers/"+oid, nil).want(t, 200).JSON(t)["seats_taken"]
		}
		billing := ""
		charged := func() string {
			order := b.call("POST", "/external_api/v1/orders", orderBody(oid)).want(t, 201).JSON(t)
			id := order["id"].(string)
			c := b.call("POST", "/external_api/v1/orders/"+id+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
			billing = c["billings"].([]any)[0].(map[string]any)["id"].(string)
			return id
		}
		charged()
		b.call("POST", "/external_api/v1/billings/"+billing+"/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}).want(t, 200)
		canceled, expiring, kept := charged(), charged(), charged()
		if got := taken(); got != float64(3) {
			t.Fatalf("seats_taken %v after four charges and a billing canceled, want 3", got)
		}
		b.call("POST", "/external_api/v1/orders/"+canceled+"/cancel", nil).want(t, 200)
		if got := taken(); got != float64(2) {
			t.Fatalf("seats_taken %v after a cancel, want 2", got)
		}
		// A canceled order's seat is not given back twice.
		b.call("POST", "/external_api/v1/orders/"+canceled+"/cancel", nil).want(t, 409)
		// The other two expire unpaid, but one is paid first.
		pay := b.bill(t, billIDs(b.call("GET", "/external_api/v1/orders/"+kept, nil).want(t, 200).JSON(t))[0])
		b.pay(t, openPayment(t, pay)["id"].(string))
		b.at(t, "2026-11-24 16:31")
		if o := b.call("GET", "/external_api/v1/orders/"+expiring, nil).want(t, 200).JSON(t); o["status"] != "canceled" {
			t.Fatalf("order not expired: %v", o["status"])
		}
		if got := taken(); got != float64(1) {
			t.Fatalf("seats_taken %v after an order expired, want 1", got)
		}
		// Without a limit nothing is counted; a limit set again counts the
		// order not canceled alone.
		b.call("PATCH", "/external_api/v1/offers/"+oid, map[string]any{"offer": map[string]any{"seats": nil}}).want(t, 200)
		if got := taken(); got != float64(0) {
			t.Fatalf("seats_taken %v without a limit, want 0 (the last count showed for ever)", got)
		}
		b.call("PATCH", "/external_api/v1/offers/"+oid, map[string]any{"offer": map[string]any{"seats": 2}}).want(t, 200)
		if got := taken(); got != float64(1) {
			t.Fatalf("seats_taken %v counted for a new limit, want 1", got)
		}
	})
}
