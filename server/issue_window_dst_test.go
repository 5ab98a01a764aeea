package server_test

import (
	"testing"
	"time"

	"parcela"
)

// An installment's boleto is issued from the start of the São Paulo day
// ten days before it is due, also when the end of daylight saving (a
// 25-hour Saturday, 17 February 2018) falls in between: the store's window
// of 10 × 24 h ended an hour short of the due instant, and the boleto came
// nine days before (an audit). Brazil kept no daylight saving since 2019;
// a time zone file that brings it back is read the same way.
func TestInstallmentIssuedTenDaysAheadAcrossTheEndOfDaylightSaving(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.clock.Set(time.Date(2018, 1, 5, 10, 0, 0, 0, parcela.SaoPaulo))
		offer := b.call("POST", "/external_api/v1/offers", offerBody(b.product()["id"].(string))).want(t, 201).JSON(t)
		_, fin := configs(offer)
		order := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
		charge := chargeBody(fin, "pix", 3)
		charge["due_day"] = 20
		ids := billIDs(b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", charge).want(t, 200).JSON(t))
		b.pay(t, openPayment(t, b.bill(t, ids[0]))["id"].(string))
		if due := b.bill(t, ids[1])["due_date"]; due != "2018-02-20T23:59:59.999-03:00" || b.company.InstallmentIssueDays != 10 {
			t.Fatalf("installment 1 due %v, issue days %d", due, b.company.InstallmentIssueDays)
		}
		b.clock.Set(time.Date(2018, 2, 9, 23, 59, 0, 0, parcela.SaoPaulo)) // eleven days before: not yet
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		if n := len(b.bill(t, ids[1])["payments"].([]any)); n != 0 {
			t.Fatalf("eleven days before its due date: %d payments issued", n)
		}
		b.clock.Set(time.Date(2018, 2, 10, 0, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		if n := len(b.bill(t, ids[1])["payments"].([]any)); n != 1 {
			t.Errorf("at the start of the day ten days before its due date: %d payments issued, want 1", n)
		}
	})
}
