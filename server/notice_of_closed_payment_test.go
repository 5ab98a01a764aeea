package server_test

import (
	"testing"
	"time"

	"parcela"
)

// paymentOf returns the bill's payment with id.
func paymentOf(t *testing.T, bill map[string]any, id string) map[string]any {
	t.Helper()
	for _, p := range bill["payments"].([]any) {
		if m := p.(map[string]any); m["id"] == id {
			return m
		}
	}
	t.Fatalf("bill %v has no payment %s: %v", bill["id"], id, bill["payments"])
	return nil
}

// The payer pays a late installment's boleto at 10:00:30, while its code is
// valid; at 10:05 the seller waives the penalty, which cancels that boleto
// and issues one for the bare amount; the bank's notice of the 10:00:30
// payment comes at 10:10. The money the bank took reaches the bill, still
// open: it is paid (over, by the penalty waived, for the seller to refund),
// and the waiver's boleto is canceled. The notice was refused, the money on
// no record and the payer asked to pay again (an audit).
func TestNoticeOfABoletoCanceledByAWaiverAfterItWasPaid(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids, amount, late := b.lateBoleto(t) // 10 March 2027 10:00
		b.clock.Set(time.Date(2027, 3, 10, 10, 5, 0, 0, parcela.SaoPaulo))
		b.call("PATCH", "/external_api/v1/bills/"+ids[1],
			map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-12-31T23:59:59.999-03:00"}}).want(t, 200)
		waived := b.bill(t, ids[1])
		if paymentOf(t, waived, late["id"].(string))["status"] != "canceled" {
			t.Fatalf("the waiver kept the priced boleto: %v", waived["payments"])
		}
		bare := openPayment(t, waived)

		b.clock.Set(time.Date(2027, 3, 10, 10, 10, 0, 0, parcela.SaoPaulo))
		// Without its paid_at, a notice of a canceled code is refused: it
		// would be dated now, after the code was voided.
		b.call("POST", "/external_api/v1/sandbox/payments/"+late["id"].(string)+"/pay", nil).want(t, 409)
		b.call("POST", "/external_api/v1/sandbox/payments/"+late["id"].(string)+"/pay",
			map[string]any{"paid_at": "2027-03-10T10:00:30.000-03:00", "notice_id": "E2E-before-the-waiver"}).want(t, 200)

		bill := b.bill(t, ids[1])
		if bill["status"] != "paid" || cents(bill["received_amount_cents"]) != cents(late["amount_cents"]) ||
			cents(bill["current_amount_cents"]) != amount {
			t.Fatalf("bill %v, owed %v, received %v; want paid owing %d, received %v",
				bill["status"], bill["current_amount_cents"], bill["received_amount_cents"], amount, late["amount_cents"])
		}
		if p := paymentOf(t, bill, late["id"].(string)); p["status"] != "paid" || cents(p["paid_amount_cents"]) != cents(late["amount_cents"]) {
			t.Errorf("the noticed boleto: %v", p)
		}
		if p := paymentOf(t, bill, bare["id"].(string)); p["status"] != "canceled" {
			t.Errorf("the waiver's boleto, once the bill was paid: %v", p)
		}
		// A second notice of money on the same code reaches no open bill.
		b.call("POST", "/external_api/v1/sandbox/payments/"+bare["id"].(string)+"/pay",
			map[string]any{"paid_at": "2027-03-10T10:06:00.000-03:00", "notice_id": "E2E-the-bare-one"}).want(t, 409)
	})
}

// An installment's boleto paid on its settlement grace's last day is
// expired by the sweep at midnight, and a boleto issued again, before the
// bank's notice comes the next morning: the notice pays the bill, as the
// bank took it (with the late charges of the grace day), and the boleto
// issued again is canceled. It found the boleto expired and was refused.
func TestNoticeOfAnExpiredBoletoPaidInItsGrace(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids := b.dueOnThe1st(t, offerBody(b.product()["id"].(string)), 4) // installment 1 due Monday 1 March 2027
		b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		first := openPayment(t, b.bill(t, ids[1]))
		expires, err := time.Parse(parcela.TimestampLayout, first["expires_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		paidAt := expires.Add(-time.Hour) // the grace's last hour

		b.clock.Set(expires.Add(9 * time.Hour))
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
		swept := b.bill(t, ids[1])
		if paymentOf(t, swept, first["id"].(string))["status"] != "expired" {
			t.Fatalf("the sweep kept the boleto: %v", swept["payments"])
		}
		again := openPayment(t, swept)

		b.call("POST", "/external_api/v1/sandbox/payments/"+first["id"].(string)+"/pay",
			map[string]any{"paid_at": paidAt.In(parcela.SaoPaulo).Format(parcela.TimestampLayout), "notice_id": "E2E-grace"}).want(t, 200)
		bill := b.bill(t, ids[1])
		if bill["status"] != "paid" || cents(bill["received_amount_cents"]) < cents(bill["current_amount_cents"]) {
			t.Fatalf("bill %v owing %v received %v", bill["status"], bill["current_amount_cents"], bill["received_amount_cents"])
		}
		if p := paymentOf(t, bill, first["id"].(string)); p["status"] != "paid" {
			t.Errorf("the noticed boleto: %v", p)
		}
		if p := paymentOf(t, bill, again["id"].(string)); p["status"] != "canceled" {
			t.Errorf("the boleto issued again: %v", p)
		}
		// At or after its expiry the bank took nothing for it.
		b.call("POST", "/external_api/v1/sandbox/payments/"+again["id"].(string)+"/pay",
			map[string]any{"paid_at": bill["paid_at"], "notice_id": "E2E-again"}).want(t, 409)
	})
}

// Money on a closed code reaches only an open bill: one whose billing was
// canceled, or a first bill that lapsed with its order, refuses it as
// before (recording money to refund is not built), and part of a bill's
// amount on a canceled code is received without paying it.
func TestNoticeOfAClosedPaymentReachesOnlyAnOpenBill(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids, amount, late := b.lateBoleto(t)
		b.clock.Set(time.Date(2027, 3, 10, 10, 5, 0, 0, parcela.SaoPaulo))
		b.call("PATCH", "/external_api/v1/bills/"+ids[1],
			map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-12-31T23:59:59.999-03:00"}}).want(t, 200)
		b.clock.Set(time.Date(2027, 3, 10, 10, 10, 0, 0, parcela.SaoPaulo))
		part := amount / 2
		b.call("POST", "/external_api/v1/sandbox/payments/"+late["id"].(string)+"/pay",
			map[string]any{"paid_at": "2027-03-10T10:00:30.000-03:00", "paid_amount_cents": part, "notice_id": "E2E-part"}).want(t, 200)
		bill := b.bill(t, ids[1])
		if bill["status"] != "overdue" || cents(bill["received_amount_cents"]) != part {
			t.Fatalf("after part of it: bill %v received %v", bill["status"], bill["received_amount_cents"])
		}
		if p := paymentOf(t, bill, late["id"].(string)); p["status"] != "canceled" || cents(p["paid_amount_cents"]) != part {
			t.Errorf("the canceled code that received part: %v", p)
		}
		// Dated after the notice's own code expired: refused as ever.
		b.call("POST", "/external_api/v1/sandbox/payments/"+late["id"].(string)+"/pay",
			map[string]any{"paid_at": "2027-12-31T10:00:30.000-03:00", "notice_id": "E2E-future"}).want(t, 422)

		billing := bill["billing"].(map[string]any)["id"].(string)
		b.call("POST", "/external_api/v1/billings/"+billing+"/cancel", map[string]any{"cancelation_reason": "customer_dropout"}).want(t, 200)
		b.call("POST", "/external_api/v1/sandbox/payments/"+late["id"].(string)+"/pay",
			map[string]any{"paid_at": "2027-03-10T10:01:30.000-03:00", "paid_amount_cents": part, "notice_id": "E2E-canceled-bill"}).want(t, 409)
	})
}
