package server_test

import (
	"context"
	"testing"
	"time"

	"parcela"
)

// An installment plan with due_day 31 charged in November 2027 falls due on
// 31 December 2027 (no settlement), moved over 1 January (a holiday, a
// Saturday) and the Sunday to Monday 3 January 2028; the next one on
// 31 January, then on 29 February 2028 (a leap day, and Carnival
// Tuesday), moved to 1 March. At the last millisecond of each effective
// due day and the first of the next, in São Paulo (03:00 UTC), the API's
// status and current amount and the checkout's total agree: on time the
// amount alone, one millisecond later the fine and the interest of every
// calendar day since the due date, across the year's turn and the leap day.
func TestDueDatesAcrossTheYearsTurnAndALeapDay(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.clock.Set(time.Date(2027, 11, 22, 10, 0, 0, 0, parcela.SaoPaulo))
		offer := b.call("POST", "/external_api/v1/offers", offerBody(b.product()["id"].(string))).want(t, 201).JSON(t)
		_, fin := configs(offer)
		order := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
		charge := chargeBody(fin, "pix", 4)
		charge["due_day"] = 31
		ids := billIDs(b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", charge).want(t, 200).JSON(t))
		b.pay(t, openPayment(t, b.bill(t, ids[0]))["id"].(string))
		a := parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}
		for _, tt := range []struct {
			id              string
			due, effective  string
			lastOnTime      time.Time // São Paulo
			daysLateOneMsOn int64
		}{
			{ids[1], "2027-12-31", "2028-01-03", time.Date(2028, 1, 3, 23, 59, 59, 999_000_000, parcela.SaoPaulo), 4},
			{ids[2], "2028-01-31", "2028-01-31", time.Date(2028, 1, 31, 23, 59, 59, 999_000_000, parcela.SaoPaulo), 1},
			{ids[3], "2028-02-29", "2028-03-01", time.Date(2028, 3, 1, 23, 59, 59, 999_000_000, parcela.SaoPaulo), 2},
		} {
			bill, _, err := b.db.Bill(context.Background(), a, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if bill.DueDate.In(parcela.SaoPaulo).Format(time.DateOnly) != tt.due || bill.EffectiveDueDate.In(parcela.SaoPaulo).Format(time.DateOnly) != tt.effective {
				t.Fatalf("bill due %v, effective %v; want %s, %s", bill.DueDate, bill.EffectiveDueDate, tt.due, tt.effective)
			}
			// Issued within the window, so that it can turn late.
			b.clock.Set(bill.DueDate.AddDate(0, 0, -9))
			b.runSweeps(t, b.sweeps.IssueDueInstallments)
			if openPayment(t, b.bill(t, tt.id)) == nil {
				t.Fatal("no payment issued")
			}
			for _, at := range []struct {
				t      time.Time
				owed   int64
				status string
			}{
				{tt.lastOnTime, bill.AmountCents, "pending"},
				{tt.lastOnTime.Add(time.Millisecond), latePrice(bill.AmountCents, tt.daysLateOneMsOn), "overdue"},
				{tt.lastOnTime.Add(time.Millisecond + 3*time.Hour), latePrice(bill.AmountCents, tt.daysLateOneMsOn), "overdue"},
			} {
				b.clock.Set(at.t)
				b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
				got := b.bill(t, tt.id)
				if got["status"] != at.status || cents(got["current_amount_cents"]) != at.owed {
					t.Errorf("bill due %s at %v (%v UTC): %v owing %v cents; want %s owing %d", tt.due, at.t, at.t.UTC(), got["status"], got["current_amount_cents"], at.status, at.owed)
				}
				if page := b.checkoutTotal(t, bill); page != at.owed {
					t.Errorf("bill due %s at %v: the checkout asks %d cents, want %d", tt.due, at.t, page, at.owed)
				}
			}
			// Paid, so the next one is alone.
			b.pay(t, openPayment(t, b.bill(t, tt.id))["id"].(string))
		}
	})
}
