package server_test

import (
	"testing"
	"time"

	"parcela"
)

// The sandbox's expire stops at a bill issued 20 payments in a day: each
// expiry of an installment's boleto issued another, and one token at the
// sandbox's rate limit grew one bill by 90,000 payments an hour, every GET
// of it, every page of bills and its order by about 1 KB each (an audit:
// 301 payments, a GET of 314 KB). The expiry sweep, which time alone
// drives, is not limited: a production bill keeps being re-issued its
// boleto.
func TestSandboxExpireStopsAtABillsPaymentLimit(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		ids := billIDs(b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "boleto", 3)).want(t, 200).JSON(t))
		b.pay(t, openPayment(t, b.bill(t, ids[0]))["id"].(string))
		b.at(t, "2027-01-01 10:00") // installment 1's boleto is issued ten days before it is due
		payment := openPayment(t, b.bill(t, ids[1]))["id"].(string)
		for n := 1; n < parcela.RequestIssuePaymentLimit; n++ {
			bill := b.call("POST", "/external_api/v1/sandbox/payments/"+payment+"/expire", nil).want(t, 200).JSON(t)
			if got := len(bill["payments"].([]any)); got != n+1 {
				t.Fatalf("expiry %d: %d payments", n, got)
			}
			payment = openPayment(t, bill)["id"].(string)
		}
		p := b.call("POST", "/external_api/v1/sandbox/payments/"+payment+"/expire", nil).want(t, 409).JSON(t)
		if p["code"] != "invalid_state" {
			t.Fatalf("the expiry past the limit: %v", p)
		}
		bill := b.bill(t, ids[1])
		if got := len(bill["payments"].([]any)); got != parcela.RequestIssuePaymentLimit || openPayment(t, bill)["id"] != payment {
			t.Fatalf("after the refused expiry: %d payments, the open one %v; want %d, %s", got, openPayment(t, bill)["id"], parcela.RequestIssuePaymentLimit, payment)
		}
		// Time still expires it, and the bill is issued its next boleto.
		b.clock.Set(time.Date(2027, 1, 25, 10, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
		bill = b.bill(t, ids[1])
		if got := len(bill["payments"].([]any)); got != parcela.RequestIssuePaymentLimit+1 || openPayment(t, bill)["id"] == payment {
			t.Fatalf("after the expiry sweep: %d payments, want %d with a new open one", got, parcela.RequestIssuePaymentLimit+1)
		}
		// Days later the sandbox expires it again: the limit counts a day.
		again := b.call("POST", "/external_api/v1/sandbox/payments/"+openPayment(t, bill)["id"].(string)+"/expire", nil).want(t, 200).JSON(t)
		if got := len(again["payments"].([]any)); got != parcela.RequestIssuePaymentLimit+2 {
			t.Fatalf("expired days later: %d payments", got)
		}
	})
}

// A waiver that cancels a late bill's boleto issues it another on the new
// terms at once, while the bill was issued fewer than 20 payments that
// day: a waiver
// cleared and set again, and again, canceled the boleto it had issued and
// issued another each time, a production token growing one bill without
// bound. Past the limit the waiver still cancels the boleto, and the issue
// sweep issues the next.
func TestWaiverIssuesAtOnceUpToABillsPaymentLimit(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids, amount, _ := b.lateBoleto(t)
		path := "/external_api/v1/bills/" + ids[1]
		waive := map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-12-31T23:59:59.999-03:00"}}
		clear := map[string]any{"bill": map[string]any{"disable_penalties_until": nil}}
		count := func(bill map[string]any) int { return len(bill["payments"].([]any)) }
		// The payments issued today, the clock standing at 2027-03-10 10:00.
		today := func(bill map[string]any) int {
			n := 0
			for _, x := range bill["payments"].([]any) {
				if x.(map[string]any)["created_at"] == "2027-03-10T10:00:00.000-03:00" {
					n++
				}
			}
			return n
		}
		for n := today(b.bill(t, ids[1])); n < parcela.RequestIssuePaymentLimit; n++ {
			before := count(b.bill(t, ids[1]))
			got := b.call("PATCH", path, waive).want(t, 200).JSON(t)
			if p := openPayment(t, got); count(got) != before+1 || cents(p["amount_cents"]) != amount {
				t.Fatalf("waived with %d payments today: %d payments, open %v", n, count(got), p)
			}
			b.call("PATCH", path, clear).want(t, 200)
		}
		atLimit := count(b.bill(t, ids[1]))
		got := b.call("PATCH", path, waive).want(t, 200).JSON(t)
		for _, x := range got["payments"].([]any) {
			if x.(map[string]any)["status"] == "unpaid" {
				t.Fatalf("a waiver at the limit issued a payment: %v", x)
			}
		}
		if count(got) != atLimit {
			t.Fatalf("a waiver at the limit: %d payments, want %d", count(got), atLimit)
		}
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		if bill := b.bill(t, ids[1]); count(bill) != atLimit+1 || cents(openPayment(t, bill)["amount_cents"]) != amount {
			t.Fatalf("the issue sweep after it: %d payments, open %v", count(bill), openPayment(t, bill))
		}
	})
}

// A waiver through tomorrow cancels a late boleto and issues one due days
// later: that boleto was priced for its due date, after the waiver ends,
// and asked the fine and interest the waiver took back, which the payer
// paid inside the waiver and the bill recorded as owed (an audit). Issued
// while the waiver holds, it asks what the bill owes now.
func TestWaiverShorterThanTheBoletoItIssues(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids, amount, _ := b.lateBoleto(t) // installment due 2027-03-01; now 2027-03-10 10:00
		waive := map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-03-11T23:59:59.999-03:00"}}
		got := b.call("PATCH", "/external_api/v1/bills/"+ids[1], waive).want(t, 200).JSON(t)
		p := openPayment(t, got)
		if cents(p["amount_cents"]) != amount || cents(got["current_amount_cents"]) != amount {
			t.Fatalf("the waiver's boleto asks %v, the bill %v; want %d", p["amount_cents"], got["current_amount_cents"], amount)
		}
		b.call("POST", "/external_api/v1/sandbox/payments/"+p["id"].(string)+"/pay", map[string]any{}).want(t, 200)
		if bill := b.bill(t, ids[1]); bill["status"] != "paid" || cents(bill["received_amount_cents"]) != amount {
			t.Errorf("paid inside the waiver: %v, received %v; want paid, %d", bill["status"], bill["received_amount_cents"], amount)
		}
	})
}

// A bill grown past 20 payments by time alone (a boleto re-issued every 72
// hours) is issued its waiver's boleto at once: counted over the bill's
// life, the limit left a seller's first waiver of a long-overdue bill with
// nothing to pay with (a review). The limit counts the payments of a day.
func TestWaiverOfABillGrownByTimeIssuesAtOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids, amount, _ := b.lateBoleto(t)
		count := func(bill map[string]any) int { return len(bill["payments"].([]any)) }
		day := time.Date(2027, 3, 10, 10, 0, 0, 0, parcela.SaoPaulo)
		for count(b.bill(t, ids[1])) < parcela.RequestIssuePaymentLimit {
			day = day.AddDate(0, 0, 1)
			if day.Year() > 2028 {
				t.Fatalf("still %d payments in 2028", count(b.bill(t, ids[1])))
			}
			b.clock.Set(day)
			b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
		}
		got := b.call("PATCH", "/external_api/v1/bills/"+ids[1], map[string]any{"bill": map[string]any{"disable_penalties_until": "2028-12-31T23:59:59.999-03:00"}}).want(t, 200).JSON(t)
		if p := openPayment(t, got); cents(p["amount_cents"]) != amount {
			t.Fatalf("a waiver of a bill of %d payments issued %v", count(got), p)
		}
	})
}
