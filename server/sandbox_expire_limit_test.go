package server_test

import (
	"testing"
	"time"

	"parcela"
)

// The sandbox's expire stops at a bill of 20 payments: each expiry of an
// installment's boleto issued another, and one token at the sandbox's rate
// limit grew one bill by 90,000 payments an hour, every GET of it, every
// page of bills and its order by about 1 KB each (an audit: 301 payments,
// a GET of 314 KB). The expiry sweep, which time alone drives, is not
// limited: a production bill keeps being re-issued its boleto.
func TestSandboxExpireStopsAtABillsPaymentLimit(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		ids := billIDs(b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "boleto", 3)).want(t, 200).JSON(t))
		b.pay(t, openPayment(t, b.bill(t, ids[0]))["id"].(string))
		b.at(t, "2027-01-01 10:00") // installment 1's boleto is issued ten days before it is due
		payment := openPayment(t, b.bill(t, ids[1]))["id"].(string)
		for n := 1; n < parcela.SandboxExpiryPaymentLimit; n++ {
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
		if got := len(bill["payments"].([]any)); got != parcela.SandboxExpiryPaymentLimit || openPayment(t, bill)["id"] != payment {
			t.Fatalf("after the refused expiry: %d payments, the open one %v; want %d, %s", got, openPayment(t, bill)["id"], parcela.SandboxExpiryPaymentLimit, payment)
		}
		// Time still expires it, and the bill is issued its next boleto.
		b.clock.Set(time.Date(2027, 1, 25, 10, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
		bill = b.bill(t, ids[1])
		if got := len(bill["payments"].([]any)); got != parcela.SandboxExpiryPaymentLimit+1 || openPayment(t, bill)["id"] == payment {
			t.Fatalf("after the expiry sweep: %d payments, want %d with a new open one", got, parcela.SandboxExpiryPaymentLimit+1)
		}
	})
}
