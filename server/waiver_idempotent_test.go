package server_test

import (
	"sync"
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

// One waiver with its Idempotency-Key sent at once to two instances: one
// runs, the other is 409 idempotency_in_flight or the same answer, and the
// bill has one live boleto, for its original amount.
func TestIdempotentWaiverAtOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.skipContract = true // answers are checked below; the sends run concurrently
		other := b.otherInstance(t)
		ids, amount, _ := b.lateBoleto(t)
		waive := map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-12-31T23:59:59.999-03:00"}}
		key := map[string]string{"Idempotency-Key": "waive-" + sqldbtest.Suffix()}
		answers := make([]resp, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, base := range []string{b.sandbox.URL, other.URL} {
			wg.Go(func() {
				<-start
				answers[i] = b.send(base, b.token, "PATCH", "/external_api/v1/bills/"+ids[1], waive, key)
			})
		}
		close(start)
		wg.Wait()
		ran := 0
		for _, r := range answers {
			switch {
			case r.Status == 200:
				ran++
			case r.Status == 409 && r.JSON(t)["code"] == "idempotency_in_flight":
			default:
				t.Fatalf("answer %d %s", r.Status, r.Body)
			}
		}
		if ran == 0 || ran == 2 && string(answers[0].Body) != string(answers[1].Body) {
			t.Fatalf("answers %d and %d", answers[0].Status, answers[1].Status)
		}
		got := b.bill(t, ids[1])
		live := 0
		for _, x := range got["payments"].([]any) {
			if x.(map[string]any)["status"] == "unpaid" {
				live++
			}
		}
		if p := openPayment(t, got); live != 1 || cents(p["amount_cents"]) != amount {
			t.Fatalf("%d live payments; the boleto: %v", live, p)
		}
	})
}
