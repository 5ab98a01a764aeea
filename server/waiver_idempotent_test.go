package server_test

import (
	"testing"

	"parcela/sqldb/sqldbtest"
)

// A waiver sent with an Idempotency-Key issues the bill its boleto on the
// new terms at once, as one sent without: the waiver's write claims the
// key, and the issue after it is a write of the same request, not another
// request's. Its retry replays the bill with that boleto.
func TestIdempotentWaiverIssuesItsBoleto(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids, amount, late := b.lateBoleto(t)
		waive := map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-12-31T23:59:59.999-03:00"}}
		key := map[string]string{"Idempotency-Key": "waive-" + sqldbtest.Suffix()}
		got := b.send(b.sandbox.URL, b.token, "PATCH", "/external_api/v1/bills/"+ids[1], waive, key).want(t, 200).JSON(t)
		for _, x := range got["payments"].([]any) {
			if p := x.(map[string]any); p["id"] == late["id"] && p["status"] != "canceled" {
				t.Fatalf("the late boleto after the waiver: %v", p)
			}
		}
		if p := openPayment(t, b.bill(t, ids[1])); cents(p["amount_cents"]) != amount || p["payment_method"] != "boleto" {
			t.Fatalf("boleto issued by the waiver: %v", p)
		}
		if p := openPayment(t, got); cents(p["amount_cents"]) != amount {
			t.Fatalf("the waiver's answer: %v", p)
		}
		again := b.send(b.sandbox.URL, b.token, "PATCH", "/external_api/v1/bills/"+ids[1], waive, key).want(t, 200)
		if p := openPayment(t, again.JSON(t)); cents(p["amount_cents"]) != amount {
			t.Fatalf("the waiver's replay: %v", p)
		}
	})
}
