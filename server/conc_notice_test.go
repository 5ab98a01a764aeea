package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// Two partial notices of one payment, each delivered three times at once
// to two instances, beside a waiver and a checkout's boleto: the payment
// receives each notice once.
func TestConcurrentNoticesApplyOnce(t *testing.T) {
	t.Parallel()
	eachConcEngine(t, concurrentNoticesApplyOnce)
}

func concurrentNoticesApplyOnce(t *testing.T, engine sqldb.Dialect) {
	b := setup(t, engine)
	b.skipContract = true
	other := b.otherInstance(t).URL
	offer := b.offer()
	up, fin := configs(offer)
	for round := 0; round < envInt("PARCELA_CONC_ROUNDS", 10); round++ {
		order := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
		body := chargeBody(up, "pix", 1)
		if round%2 == 1 {
			body = chargeBody(fin, "pix", 3)
		}
		ch := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", body).want(t, 200).JSON(t)
		billID := billIDs(ch)[0]
		bill := b.bill(t, billID)
		p := openPayment(t, bill)
		pid, amount := p["id"].(string), mcents(p["amount_cents"])
		x, y := amount/3, amount/4
		notices := []map[string]any{
			{"notice_id": fmt.Sprintf("E%d-A-%s", round, sqldbtest.Suffix()), "paid_amount_cents": x},
			{"notice_id": fmt.Sprintf("E%d-B-%s", round, sqldbtest.Suffix()), "paid_amount_cents": y},
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		res := make([]resp, 6)
		for i := range 6 {
			base := b.sandbox.URL
			if i%2 == 1 {
				base = other
			}
			wg.Go(func() {
				<-start
				res[i] = b.send(base, b.token, "POST", "/external_api/v1/sandbox/payments/"+pid+"/pay", notices[i/3], nil)
			})
		}
		wg.Go(func() {
			<-start
			b.send(b.sandbox.URL, b.token, "PATCH", "/external_api/v1/bills/"+billID, map[string]any{"bill": map[string]any{"disable_penalties_until": b.clock.Now().Add(48 * time.Hour).Format(time.RFC3339Nano)}}, nil)
		})
		wg.Go(func() {
			<-start
			_, _ = b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, billID, bill["authentication_code"].(string), "boleto")
		})
		close(start)
		wg.Wait()
		for i, r := range res {
			if r.Status != 200 {
				t.Errorf("round %d: notice %d answered %d %s", round, i/3, r.Status, r.Body)
			}
		}
		got := b.bill(t, billID)
		var paid int64
		for _, q := range got["payments"].([]any) {
			if q := q.(map[string]any); q["id"] == pid {
				paid = mcents(q["paid_amount_cents"])
			}
		}
		if paid != x+y {
			t.Errorf("round %d: the payment received %d, notices of %d and %d", round, paid, x, y)
		}
		if mcents(got["received_amount_cents"]) != x+y {
			t.Errorf("round %d: the bill received %v", round, got["received_amount_cents"])
		}
	}
}
