package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb/sqldbtest"
	"parcela/web"
)

// The first installment falls due after the down payment, and no bill turns
// late before its plan is running and it has a payment to be paid with.
// These tests move the clock across a month's end with due_day 1, where an
// installment used to fall due before the down payment.

// chargedNearMonthEnd charges a financed order on Friday 29 January 2027 with
// due_day 1, its down payment due expiresIn hours later, and returns the
// order id and its bill ids (down payment first).
func (b *bundle) chargedNearMonthEnd(t *testing.T, expiresIn int, method string) (orderID string, bills []string) {
	t.Helper()
	b.clock.Set(time.Date(2027, 1, 29, 15, 30, 0, 0, parcela.SaoPaulo))
	body := offerBody(b.product()["id"].(string))
	body["payment_configurations"].([]any)[1].(map[string]any)["expires_in_hours"] = expiresIn
	offer := b.call("POST", "/external_api/v1/offers", body).want(t, 201).JSON(t)
	_, fin := configs(offer)
	order := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
	orderID = order["id"].(string)
	charge := chargeBody(fin, method, 4)
	charge["due_day"] = 1
	charged := b.call("POST", "/external_api/v1/orders/"+orderID+"/charge", charge).want(t, 200).JSON(t)
	return orderID, billIDs(charged)
}

// orderBills lists the order's bills through GET /bills?order_id=, by id.
func (b *bundle) orderBills(t *testing.T, orderID string) map[string]map[string]any {
	t.Helper()
	page := b.call("GET", "/external_api/v1/bills?order_id="+orderID, nil).want(t, 200).JSON(t)
	out := map[string]map[string]any{}
	for _, x := range page["results"].([]any) {
		m := x.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// runSweeps runs the named sweeps of the bundle's company, in order, and
// fails on any bill a sweep could not process.
func (b *bundle) runSweeps(t *testing.T, sweeps ...func(context.Context) (parcela.SweepReport, error)) {
	t.Helper()
	for _, f := range sweeps {
		r, err := f(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, failure := range r.Failed {
			t.Fatalf("sweep %s failed on %s: %v", failure.Sweep, failure.Row.ID, failure.Err)
		}
	}
}

func timestamp(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %v: %v", v, err)
	}
	return ts.In(parcela.SaoPaulo)
}

// firstDueDayAfterAMonth is the rule, computed here on its own: the first
// day-dueDay on or after one month past the down payment's São Paulo date,
// where "one month past" the 31st of a short month is that month's last day.
func firstDueDayAfterAMonth(downPaymentDue time.Time, dueDay int) time.Time {
	y, m, d := downPaymentDue.In(parcela.SaoPaulo).Date()
	lastDay := func(y int, m time.Month) int { return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day() }
	next := time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
	floor := time.Date(next.Year(), next.Month(), min(d, lastDay(next.Year(), next.Month())), 0, 0, 0, 0, time.UTC)
	for c := next; ; c = c.AddDate(0, 1, 0) {
		if due := time.Date(c.Year(), c.Month(), min(dueDay, lastDay(c.Year(), c.Month())), 0, 0, 0, 0, time.UTC); !due.Before(floor) {
			return due
		}
	}
}

func sameDate(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

func cents(v any) int64 {
	n, _ := v.(float64)
	return int64(n)
}

// With due_day 1 charged on 29 January, installment 1 falls due after the
// down payment; while the down payment is unpaid the billing waits, and its
// installment neither turns overdue nor accrues a penalty, even past its due
// date, and even once the unpaid down payment has lapsed.
func TestFirstInstallmentAfterTheDownPayment(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		expiresIn int    // hours from the charge to the down payment's due date
		method    string // of the down payment
		dpDue     string // São Paulo date of the down payment
		firstDue  string // São Paulo date of installment 1
	}{
		// Due Monday 1 February: one month later is 1 March, a due day 1.
		{"three_days", 72, "boleto", "2027-02-01", "2027-03-01"},
		// The longest expiry: due Sunday 28 February, so 28 March is the
		// floor and 1 April the first due day 1.
		{"thirty_days", 720, "pix", "2027-02-28", "2027-04-01"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			each(t, func(t *testing.T, b *bundle) {
				orderID, ids := b.chargedNearMonthEnd(t, c.expiresIn, c.method)
				bills := b.orderBills(t, orderID)
				if len(bills) != 4 {
					t.Fatalf("GET /bills?order_id= lists %d bills, want 4", len(bills))
				}
				dp, i1 := bills[ids[0]], bills[ids[1]]
				dpDue, i1Due := timestamp(t, dp["due_date"]), timestamp(t, i1["due_date"])
				if !i1Due.After(dpDue) {
					t.Fatalf("installment 1 due %v, not after the down payment's %v", i1Due, dpDue)
				}
				if want := firstDueDayAfterAMonth(dpDue, 1); !sameDate(i1Due, want) {
					t.Fatalf("installment 1 due %v, want the first day 1 at least a month after %v: %v", i1Due, dpDue, want.Format(time.DateOnly))
				}
				if dpDue.Format(time.DateOnly) != c.dpDue || i1Due.Format(time.DateOnly) != c.firstDue {
					t.Fatalf("down payment due %v, installment 1 %v; want %s and %s", dpDue, i1Due, c.dpDue, c.firstDue)
				}
				for k := 2; k <= 3; k++ {
					due := timestamp(t, bills[ids[k]]["due_date"])
					if want := i1Due.AddDate(0, k-1, 0); !sameDate(due, want) {
						t.Fatalf("installment %d due %v, want %v", k, due, want)
					}
				}
				amount := cents(i1["amount_cents"])

				// A day past installment 1's effective due date, the down
				// payment still unpaid and the billing still waiting for it
				// (the expiry sweep has not run): the overdue and issue sweeps
				// leave the installment alone.
				eff := timestamp(t, i1["effective_due_date"])
				b.clock.Set(time.Date(eff.Year(), eff.Month(), eff.Day()+1, 10, 0, 0, 0, parcela.SaoPaulo))
				b.runSweeps(t, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
				got := b.orderBills(t, orderID)[ids[1]]
				if billing := got["billing"].(map[string]any); billing["status"] != "waiting_payment" {
					t.Fatalf("billing %v, want waiting_payment before the expiry sweep", billing["status"])
				}
				if got["status"] != "pending" || cents(got["current_amount_cents"]) != amount || len(got["payments"].([]any)) != 0 {
					t.Fatalf("installment 1 of a waiting billing past its due date: status %v, current %v of %d, payments %v",
						got["status"], got["current_amount_cents"], amount, got["payments"])
				}

				// The down payment cannot still be payable here (installment 1
				// falls a month after its due date): once every sweep runs, the
				// plan, its bills and the order are canceled for the unpaid
				// down payment, and installment 1 never turned overdue nor owes
				// a penalty.
				b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments, b.sweeps.RecoverIntents)
				got = b.orderBills(t, orderID)[ids[1]]
				billing := got["billing"].(map[string]any)
				if billing["status"] != "canceled" || billing["cancelation_reason"] != "down_payment_not_paid" || got["status"] != "canceled" {
					t.Fatalf("after the down payment lapsed: billing %v (%v), installment 1 %v; want all canceled for down_payment_not_paid",
						billing["status"], billing["cancelation_reason"], got["status"])
				}
				if cents(got["current_amount_cents"]) != amount {
					t.Fatalf("installment 1 of a lapsed plan owes %v, want its %d cents", got["current_amount_cents"], amount)
				}
				if order := b.call("GET", "/external_api/v1/orders/"+orderID, nil).want(t, 200).JSON(t); order["status"] != "canceled" {
					t.Fatalf("order %v after its down payment lapsed", order["status"])
				}
				for _, ev := range b.eventLog(t) {
					if ev == "bill:overdue" {
						t.Fatalf("a bill turned overdue: %v", b.eventLog(t))
					}
				}
			})
		})
	}
}

// Once the down payment is paid, installment 1 turns overdue past its
// effective due date only with a live payment to pay it with, and then owes
// the 2% fine and the daily interest on its original amount.
func TestFirstInstallmentLateOnlyWithALivePayment(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		orderID, ids := b.chargedNearMonthEnd(t, 72, "boleto")
		dp := b.bill(t, ids[0])
		if paid := b.pay(t, openPayment(t, dp)["id"].(string)); paid["billing"].(map[string]any)["status"] != "active" {
			t.Fatalf("billing %v after the down payment", paid["billing"])
		}
		i1 := b.orderBills(t, orderID)[ids[1]]
		amount := cents(i1["amount_cents"])
		eff := timestamp(t, i1["effective_due_date"])
		if eff.Format(time.DateOnly) != "2027-03-01" {
			t.Fatalf("installment 1 effective due %v, want Monday 1 March 2027", eff)
		}
		late := time.Date(2027, 3, 4, 10, 0, 0, 0, parcela.SaoPaulo) // three days past it

		// Issued inside the company's window, ten days before its due
		// instant (the end of 1 March).
		b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		p := openPayment(t, b.bill(t, ids[1]))
		if cents(p["amount_cents"]) != amount {
			t.Fatalf("installment payment %v, want %d cents", p, amount)
		}

		b.clock.Set(late)
		b.runSweeps(t, b.sweeps.IssueDueInstallments, b.sweeps.MarkOverdue)
		got := b.orderBills(t, orderID)[ids[1]]
		want := parcela.LatePenalty(amount, timestamp(t, i1["due_date"]), eff, nil, late, b.company.FineRate, b.company.MonthlyInterestRate)
		if want.DaysLate != 3 || want.FineCents != parcela.MustRate("0.02").MulCents(amount) {
			t.Fatalf("domain penalty %+v, want 3 days and a 2%% fine", want)
		}
		if got["status"] != "overdue" || cents(got["current_amount_cents"]) != want.Total(amount) || cents(got["original_amount_cents"]) != amount {
			t.Fatalf("three days late: status %v, current %v (original %v), want overdue at %d",
				got["status"], got["current_amount_cents"], got["original_amount_cents"], want.Total(amount))
		}
		if want.Total(amount) != latePrice(amount, 3) {
			t.Fatalf("penalty %d differs from 2%% + 1%%/30 a day: %d", want.Total(amount), latePrice(amount, 3))
		}

		// Its boleto lapses after the bank's grace and is re-issued: the
		// bill stays overdue, and still owes from its own due date.
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
		got = b.bill(t, ids[1])
		if got["status"] != "overdue" || cents(got["current_amount_cents"]) != want.Total(amount) {
			t.Fatalf("after the re-issue: status %v, current %v, want overdue at %d", got["status"], got["current_amount_cents"], want.Total(amount))
		}
		live := openPayment(t, got)
		if timestamp(t, live["expires_at"]).Before(late) {
			t.Fatalf("re-issued payment already expired: %v", live)
		}

		// Paid with it, the bill says it owed what it received, in its
		// GET and its bill.paid event: the fine and interest were owed,
		// not paid over for the seller to refund.
		b.pay(t, live["id"].(string))
		got = b.bill(t, ids[1])
		evs, err := b.db.Events(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, ids[1])
		if err != nil {
			t.Fatal(err)
		}
		var paid map[string]any
		if last := evs[len(evs)-1]; last.Event != "paid" || json.Unmarshal(last.Data, &paid) != nil {
			t.Fatalf("last event %s", last.Event)
		}
		for _, f := range []map[string]any{got, paid} {
			if f["status"] != "paid" || cents(f["received_amount_cents"]) != cents(live["amount_cents"]) ||
				cents(f["current_amount_cents"]) != cents(live["amount_cents"]) || cents(f["current_amount_cents"]) <= amount {
				t.Fatalf("paid late with its %v-cent boleto: %v, owing %v, received %v", live["amount_cents"], f["status"], f["current_amount_cents"], f["received_amount_cents"])
			}
		}
	})
}

// An installment past its due date whose payment was never issued (the
// issue sweep had not run) does not turn overdue and owes nothing; issued
// late, it is payable before it is late.
func TestInstallmentWithoutAPaymentIsNotLate(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		orderID, ids := b.chargedNearMonthEnd(t, 72, "pix")
		b.pay(t, openPayment(t, b.bill(t, ids[0]))["id"].(string))
		amount := cents(b.bill(t, ids[1])["amount_cents"])

		b.clock.Set(time.Date(2027, 3, 4, 10, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.MarkOverdue)
		got := b.orderBills(t, orderID)[ids[1]]
		if got["billing"].(map[string]any)["status"] != "active" {
			t.Fatalf("billing %v", got["billing"])
		}
		if got["status"] != "pending" || cents(got["current_amount_cents"]) != amount || len(got["payments"].([]any)) != 0 {
			t.Fatalf("unissued installment past due: status %v, current %v of %d, payments %v", got["status"], got["current_amount_cents"], amount, got["payments"])
		}

		b.runSweeps(t, b.sweeps.IssueDueInstallments, b.sweeps.MarkOverdue)
		got = b.bill(t, ids[1])
		p := openPayment(t, got)
		if got["status"] != "pending" || cents(got["current_amount_cents"]) != amount || cents(p["amount_cents"]) != amount {
			t.Fatalf("installment issued late: status %v, current %v, payment %v; want pending at %d", got["status"], got["current_amount_cents"], p, amount)
		}
	})
}

// A refused card attempt on an installment past its due date with no
// boleto yet issues the payer nothing to pay with: the boleto asked for
// after it carries the original amount, and the overdue sweep leaves the
// bill pending until that boleto expires.
func TestCardAttemptMakesNoInstallmentLate(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		i1 := b.firstInstallment(t, "boleto", "credit_card")

		// Three days past its effective due date (the end of 1 March), unissued.
		b.clock.Set(time.Date(2027, 3, 4, 23, 59, 59, 999e6, parcela.SaoPaulo))
		refused := parcela.CardPayment{Number: "4000 0000 0000 9995", HolderName: "MARIA DA SILVA", ExpiryMonth: 12, ExpiryYear: 2030, CVV: "123", Installments: 1}
		if p, err := b.app.Checkout.PayByCard(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, refused); err != nil || p.Status != parcela.PaymentRefused {
			t.Fatalf("card attempt: %+v, %v", p, err)
		}
		b.clock.Advance(time.Minute)
		p, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodBoleto)
		if err != nil || p.AmountCents != i1.AmountCents {
			t.Fatalf("boleto after the attempt: %+v, %v; want %d cents", p, err, i1.AmountCents)
		}
		b.clock.Advance(time.Hour)
		// The sweep's selection leaves it out, as the domain does.
		late, err := b.db.LateInstallments(context.Background(), parcela.Due{Now: b.clock.Now(), Companies: []string{b.company.ID}, Limit: 100})
		if err != nil || len(late) != 0 {
			t.Fatalf("late installments selected: %+v, %v", late, err)
		}
		b.runSweeps(t, b.sweeps.MarkOverdue)
		if got := b.bill(t, i1.ID); got["status"] != "pending" || cents(got["current_amount_cents"]) != i1.AmountCents {
			t.Fatalf("after the attempt and the boleto: status %v, current %v; want pending at %d", got["status"], got["current_amount_cents"], i1.AmountCents)
		}
	})
}

// A down payment charged by boleto due on a Saturday afternoon stays
// payable all Monday. A Pix asked for on its checkout on Sunday is good
// until Monday's end, expiring the millisecond after (it used to expire at
// Saturday's due instant, before it was issued); in Tuesday's settlement
// grace none is issued, and the bill does not lapse until the boleto
// expires.
func TestFirstBillPixAskedForAfterItsDueInstant(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, ids, first, pix := b.firstBillPixOnSunday(t)
		if want := time.Date(2027, 2, 2, 0, 0, 0, 0, parcela.SaoPaulo); !pix.ExpiresAt.Equal(want) || pix.AmountCents != first.AmountCents {
			t.Fatalf("Pix asked for on Sunday: %d cents, expires %v; want %d cents, expiring %v", pix.AmountCents, pix.ExpiresAt, first.AmountCents, want)
		}
		b.clock.Set(time.Date(2027, 2, 2, 10, 0, 0, 0, parcela.SaoPaulo))
		if _, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, first.ID, first.AuthenticationCode, parcela.MethodPix); parcela.ErrorCode(err) != parcela.EINVALIDSTATE {
			t.Fatalf("Pix asked for in the boleto's grace: %v, want invalid_state", err)
		}
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.LapseFirstBills)
		if got := b.bill(t, ids[0]); got["status"] != "pending" || got["billing"].(map[string]any)["status"] != "waiting_payment" {
			t.Fatalf("in the boleto's grace: bill %v, billing %v", got["status"], got["billing"])
		}
	})
}

// An installment issued nothing by its due date, then a Pix on its
// checkout: a boleto asked for while that Pix is live is due days from
// now (it used to be due on the date already past, and expired before it
// was issued), for the original amount.
func TestInstallmentBoletoAskedForAfterALatePix(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		i1 := b.firstInstallment(t, "boleto", "pix")
		// Three days past its effective due date (the end of 1 March), unissued.
		b.clock.Set(time.Date(2027, 3, 4, 10, 0, 0, 0, parcela.SaoPaulo))
		if _, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Hour)
		boleto, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodBoleto)
		if err != nil {
			t.Fatal(err)
		}
		// Due Sunday 7 March (72 hours on), payable Monday, and Tuesday in
		// its grace: it expires as Wednesday begins.
		if want := time.Date(2027, 3, 10, 0, 0, 0, 0, parcela.SaoPaulo); !boleto.ExpiresAt.Equal(want) || boleto.AmountCents != i1.AmountCents {
			t.Fatalf("boleto: %d cents, expires %v; want %d cents, expiring %v", boleto.AmountCents, boleto.ExpiresAt, i1.AmountCents, want)
		}
	})
}

// firstInstallment charges, on 29 January 2027, a financed order of an
// offer whose financed configuration takes methods (4 payments, due on
// the 1st, the down payment by Pix), pays the down payment, and returns
// the first installment (due 1 March), nothing issued for it yet.
func (b *bundle) firstInstallment(t *testing.T, methods ...string) *parcela.Bill {
	t.Helper()
	body := offerBody(b.product()["id"].(string))
	body["payment_configurations"].([]any)[1].(map[string]any)["payment_methods"] = methods
	ids := b.dueOnThe1st(t, body, 4)
	i1, _, err := b.db.Bill(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	return i1
}

// dueOnThe1st creates the offer of body on 29 January 2027, charges an
// order of it financed in n bills due on the 1st (the down payment by
// Pix), pays the down payment, and returns the bills' ids.
func (b *bundle) dueOnThe1st(t *testing.T, body map[string]any, n int) []string {
	t.Helper()
	b.clock.Set(time.Date(2027, 1, 29, 15, 30, 0, 0, parcela.SaoPaulo))
	offer := b.call("POST", "/external_api/v1/offers", body).want(t, 201).JSON(t)
	_, fin := configs(offer)
	order := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
	charge := chargeBody(fin, "pix", n)
	charge["due_day"] = 1
	ids := billIDs(b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", charge).want(t, 200).JSON(t))
	b.pay(t, openPayment(t, b.bill(t, ids[0]))["id"].(string))
	return ids
}

// The largest installment a plan allows, months late: its fine and
// interest stop where the bill reaches what a boleto carries, so the
// boleto re-issued for it is issued (it was a 503 forever: the bank
// refused an eleven-digit amount), and paying it pays the bill.
func TestLateInstallmentStaysWithinABoleto(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.clock.Set(time.Date(2027, 1, 29, 15, 30, 0, 0, parcela.SaoPaulo))
		product := productBody()
		product["product"].(map[string]any)["full_amount_cents"] = parcela.MaxAmountCents
		body := offerBody(b.call("POST", "/external_api/v1/products", product).want(t, 201).JSON(t)["id"].(string))
		body["offer"].(map[string]any)["amount_cents"] = parcela.MaxAmountCents
		fin := body["payment_configurations"].([]any)[1].(map[string]any)
		fin["down_payment_value"], fin["interest_rate"], fin["registration_fee"], fin["max_installments"] = json.Number("0.1"), json.Number("0.0299"), json.Number("0"), 2
		ids := b.dueOnThe1st(t, body, 2)
		amount := cents(b.bill(t, ids[1])["amount_cents"])

		b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		eff := timestamp(t, b.bill(t, ids[1])["effective_due_date"])
		late := time.Date(2027, 9, 1, 10, 0, 0, 0, parcela.SaoPaulo) // six months past it
		if p := parcela.LatePenalty(amount, timestamp(t, b.bill(t, ids[1])["due_date"]), eff, nil, late, b.company.FineRate, b.company.MonthlyInterestRate); p.Total(amount) <= parcela.MaxAmountCents {
			t.Fatalf("installment of %d cents owes %d six months late: the test needs one past %d", amount, p.Total(amount), int64(parcela.MaxAmountCents))
		}

		b.clock.Set(late)
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
		got := b.bill(t, ids[1])
		live := openPayment(t, got)
		if got["status"] != "overdue" || cents(got["current_amount_cents"]) != parcela.MaxAmountCents || cents(live["amount_cents"]) != parcela.MaxAmountCents {
			t.Fatalf("six months late: status %v, current %v, payment %v cents; want overdue at %d", got["status"], got["current_amount_cents"], live["amount_cents"], int64(parcela.MaxAmountCents))
		}
		if paid := b.pay(t, live["id"].(string)); paid["status"] != "paid" {
			t.Fatalf("paying the re-issued boleto: bill %v", paid["status"])
		}
	})
}

// A settlement in the last millisecond of an installment's due day is on
// time, whatever digits its paid_at carries past the millisecond (every
// instant is stored and shown to the millisecond): it used to owe the fine
// from 23:59:59.9991 on, while the payment stored paid at 23:59:59.999.
func TestSettlementInTheDueDaysLastMillisecondIsOnTime(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		i1 := b.firstInstallment(t, "boleto")
		b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		p := openPayment(t, b.bill(t, i1.ID))
		b.clock.Set(time.Date(2027, 3, 2, 10, 0, 0, 0, parcela.SaoPaulo))
		// Installment 1 is due at the end of Monday 1 March.
		paid := b.call("POST", "/external_api/v1/sandbox/payments/"+p["id"].(string)+"/pay",
			map[string]any{"paid_at": "2027-03-01T23:59:59.999500-03:00"}).want(t, 200).JSON(t)
		for _, x := range paid["payments"].([]any) {
			if m := x.(map[string]any); m["id"] == p["id"] {
				if m["status"] != "paid" || cents(m["paid_amount_cents"]) != i1.AmountCents || m["paid_at"] != "2027-03-01T23:59:59.999-03:00" {
					t.Fatalf("paid in the due day's last millisecond: %v; want paid %d cents at 23:59:59.999", m, i1.AmountCents)
				}
				return
			}
		}
		t.Fatalf("payment %v not in %v", p["id"], paid["payments"])
	})
}

// An installment's Pix asked for on its checkout before the due date,
// paid in the due day's last millisecond, pays the bill on time, as its
// boleto would: the Pix expires the millisecond after. It expired at that
// millisecond, and the notice was refused with 422 while the bill was
// still on time.
func TestInstallmentPixPaidInTheDueDaysLastMillisecond(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		i1 := b.firstInstallment(t, "boleto", "pix")
		b.clock.Set(time.Date(2027, 2, 26, 9, 0, 0, 0, parcela.SaoPaulo))
		pix, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix)
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2027, 3, 2, 0, 0, 0, 0, parcela.SaoPaulo); !pix.ExpiresAt.Equal(want) {
			t.Errorf("the Pix expires %v, want %v (installment 1 is due at the end of Monday 1 March)", pix.ExpiresAt, want)
		}
		b.clock.Set(time.Date(2027, 3, 1, 23, 59, 59, 999e6, parcela.SaoPaulo))
		if got := b.bill(t, i1.ID); got["status"] != "pending" || cents(got["current_amount_cents"]) != i1.AmountCents {
			t.Fatalf("at the due day's last millisecond: %v, %v cents", got["status"], got["current_amount_cents"])
		}
		paid := b.call("POST", "/external_api/v1/sandbox/payments/"+pix.ID+"/pay",
			map[string]any{"paid_at": "2027-03-01T23:59:59.999500-03:00"}).want(t, 200).JSON(t)
		if paid["status"] != "paid" || cents(paid["received_amount_cents"]) != i1.AmountCents {
			t.Fatalf("paid by its Pix in the due day's last millisecond: bill %v, received %v of %d", paid["status"], paid["received_amount_cents"], i1.AmountCents)
		}
	})
}

// A waiver of the penalty of a late installment whose late boleto already
// received more than the original amount pays the bill: its payments
// received what it now owes. The boleto that received it is paid, where
// the bill stayed overdue for ever, its boleto asking for the penalty
// waived and no new one issuable (it owed less than nothing).
func TestWaiverUnderWhatALateBillReceived(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids, amount, late := b.lateBoleto(t)
		b.call("POST", "/external_api/v1/sandbox/payments/"+late["id"].(string)+"/pay", map[string]any{"paid_amount_cents": amount + 100}).want(t, 200)
		got := b.call("PATCH", "/external_api/v1/bills/"+ids[1], map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-12-31T23:59:59.999-03:00"}}).want(t, 200).JSON(t)
		if got["status"] != "paid" || got["paid_at"] != "2027-03-10T10:00:00.000-03:00" {
			t.Fatalf("waived under what it received (%d of %d owed): bill %v paid at %v", amount+100, amount, got["status"], got["paid_at"])
		}
		p := got["payments"].([]any)[len(got["payments"].([]any))-1].(map[string]any)
		if p["id"] != late["id"] || p["status"] != "paid" || cents(p["paid_amount_cents"]) != amount+100 {
			t.Fatalf("the boleto that received the bill: %v", p)
		}
		if o := b.call("GET", "/external_api/v1/bills/"+ids[2], nil).want(t, 200).JSON(t); o["status"] != "pending" {
			t.Fatalf("the next installment: %v", o["status"])
		}
	})
}

// A waiver of a late installment's penalty cancels its live boleto, which
// asks for the penalty, and issues one for the original amount at once,
// where the payer paying the boleto they held paid the penalty waived,
// and had nothing to pay with until the issue sweep ran. A boleto issued
// before the due date, which carries none, stays.
func TestWaiverCancelsABoletoPricedWithThePenalty(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids, amount, late := b.lateBoleto(t)
		waive := map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-12-31T23:59:59.999-03:00"}}
		got := b.call("PATCH", "/external_api/v1/bills/"+ids[1], waive).want(t, 200).JSON(t)
		if cents(got["current_amount_cents"]) != amount {
			t.Fatalf("waived bill owes %v, want %d", got["current_amount_cents"], amount)
		}
		for _, x := range got["payments"].([]any) {
			if p := x.(map[string]any); p["id"] == late["id"] && p["status"] != "canceled" {
				t.Fatalf("the late boleto after the waiver: %v", p)
			}
		}
		if p := openPayment(t, got); cents(p["amount_cents"]) != amount || p["payment_method"] != "boleto" {
			t.Fatalf("boleto issued by the waiver: %v", p)
		}
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		if p := openPayment(t, b.bill(t, ids[1])); cents(p["amount_cents"]) != amount {
			t.Fatalf("boleto issued after the waiver: %v cents, want %d", p["amount_cents"], amount)
		}
		b.clock.Set(time.Date(2027, 3, 25, 10, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		onTime := openPayment(t, b.bill(t, ids[2]))
		b.call("PATCH", "/external_api/v1/bills/"+ids[2], waive).want(t, 200)
		if p := openPayment(t, b.bill(t, ids[2])); p["id"] != onTime["id"] {
			t.Fatalf("a boleto with no penalty was replaced by a waiver: %v, was %v", p["id"], onTime["id"])
		}
	})
}

// lateBoleto charges an order of installments due on the 1st and lets its
// first installment's boleto expire unpaid: it is re-issued carrying a
// penalty over R$ 1,00, on 10 March 2027 at 10:00. It returns the bills,
// the installment's original amount and its late boleto.
func (b *bundle) lateBoleto(t *testing.T) (ids []string, amount int64, late map[string]any) {
	t.Helper()
	ids = b.dueOnThe1st(t, offerBody(b.product()["id"].(string)), 4)
	b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
	b.runSweeps(t, b.sweeps.IssueDueInstallments)
	amount = cents(b.bill(t, ids[1])["amount_cents"])
	b.clock.Set(time.Date(2027, 3, 10, 10, 0, 0, 0, parcela.SaoPaulo))
	b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
	late = openPayment(t, b.bill(t, ids[1]))
	if cents(late["amount_cents"]) <= amount+100 {
		t.Fatalf("re-issued boleto %v, want one carrying a penalty over R$ 1,00 on %d", late, amount)
	}
	return ids, amount, late
}

// A bill's effective_due_date, as the contract describes it, on a weekend:
// an installment's moves to the next business day's end, a first bill
// charged as a boleto is payable through the end of that day, and one
// charged by Pix is due at its Pix's expiry, Sunday or not.
func TestEffectiveDueDateOnAWeekend(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.clock.Set(time.Date(2026, time.November, 19, 10, 0, 0, 0, parcela.SaoPaulo)) // Thursday; 72 h on is Sunday
		for _, tt := range []struct{ method, first string }{
			{"pix", "2026-11-22T10:00:00.000-03:00"},
			{"boleto", "2026-11-23T23:59:59.999-03:00"},
		} {
			offer, order := b.order()
			_, fin := configs(offer)
			charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, tt.method, 3)).want(t, 200).JSON(t)
			bills := billIDs(charged)
			first, installment := b.bill(t, bills[0]), b.bill(t, bills[1])
			if first["due_date"] != "2026-11-22T10:00:00.000-03:00" || first["effective_due_date"] != tt.first {
				t.Errorf("%s: first bill due %v, effective %v, want effective %s", tt.method, first["due_date"], first["effective_due_date"], tt.first)
			}
			// Installment 1 is due on Sunday 10 January 2027.
			if installment["due_date"] != "2027-01-10T23:59:59.999-03:00" || installment["effective_due_date"] != "2027-01-11T23:59:59.999-03:00" {
				t.Errorf("%s: installment due %v, effective %v", tt.method, installment["due_date"], installment["effective_due_date"])
			}
		}
	})
}

// An installment issued its first boleto only after its due date is not
// late until that boleto expires: a Pix asked for meanwhile carries the
// original amount, as the bill then owes, though it is due after that
// expiry. It carried the fine and a day's interest, R$ 7.02 more than the
// bill owed, charged to a payer who was not late. Once the bill is late,
// what is issued for it carries its penalty as before.
func TestPaymentAskedForBeforeALateIssuedBoletoExpiresOwesNoPenalty(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		i1 := b.firstInstallment(t, "boleto", "pix")
		// Three days past its effective due date (the end of 1 March), the
		// sweep issues its first boleto: due Sunday 7 March, expiring as
		// Tuesday 9 March, its grace, ends.
		b.clock.Set(time.Date(2027, 3, 4, 10, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		boleto := openPayment(t, b.bill(t, i1.ID))
		if boleto["expires_at"] != "2027-03-10T00:00:00.000-03:00" || cents(boleto["amount_cents"]) != i1.AmountCents {
			t.Fatalf("boleto issued late: %v", boleto)
		}

		b.clock.Set(time.Date(2027, 3, 8, 10, 0, 0, 0, parcela.SaoPaulo)) // a Pix asked for now is due Thursday
		pix, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.bill(t, i1.ID); pix.AmountCents != i1.AmountCents || got["status"] != "pending" || cents(got["current_amount_cents"]) != i1.AmountCents {
			t.Fatalf("Pix asked for before the bill is late: %d cents; bill %v at %v; want %d", pix.AmountCents, got["status"], got["current_amount_cents"], i1.AmountCents)
		}

		// Late from Wednesday: the boleto re-issued when the first expires carries the penalty.
		b.clock.Set(time.Date(2027, 3, 12, 10, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue)
		got := b.bill(t, i1.ID)
		reissued := openPayment(t, got)
		if got["status"] != "overdue" || cents(reissued["amount_cents"]) <= i1.AmountCents {
			t.Fatalf("late: bill %v, re-issued %v cents; want overdue, more than %d", got["status"], reissued["amount_cents"], i1.AmountCents)
		}
	})
}

// A late installment's re-issued boleto is due on a business day, and on
// that day the bill is one amount: the boleto's, the API's current amount,
// the checkout's total and what a card is charged. Re-issued on a
// Wednesday 72 hours before a Saturday, it was due that Saturday, priced
// to it, and taken for that amount on the Monday, when the API, the
// checkout and the card asked for two days' more interest. Paid after
// its due day, the bank collects what the bill owes then, and the
// checkout's boleto asks that.
func TestOneAmountOnTheDayALateBoletoIsDue(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for _, tt := range []struct {
			paidOn int    // March 2027
			by     string // boleto or credit_card
		}{{15, "credit_card"}, {15, "boleto"}, {16, "boleto"}} {
			body := offerBody(b.product()["id"].(string))
			body["payment_configurations"].([]any)[1].(map[string]any)["payment_methods"] = []string{"boleto", "credit_card"}
			ids := b.dueOnThe1st(t, body, 4)
			b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
			b.runSweeps(t, b.sweeps.IssueDueInstallments)
			// Wednesday 10 March: its boleto expired, one is re-issued.
			b.clock.Set(time.Date(2027, 3, 10, 10, 0, 0, 0, parcela.SaoPaulo))
			b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
			late := openPayment(t, b.bill(t, ids[1]))
			bill, _, err := b.db.Bill(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, ids[1])
			if err != nil {
				t.Fatal(err)
			}
			if due := bill.Payments[len(bill.Payments)-1].BoletoDueDate(); due.Format(time.DateOnly) != "2027-03-15" {
				t.Fatalf("boleto re-issued on Wednesday 10 March due %v, want Monday 15 March", due)
			}

			b.clock.Set(time.Date(2027, 3, tt.paidOn, 23, 59, 0, 0, parcela.SaoPaulo))
			owed := cents(b.bill(t, ids[1])["current_amount_cents"])
			if page := b.checkoutTotal(t, bill); page != owed {
				t.Fatalf("on %d March the API asks %d cents, the checkout %d", tt.paidOn, owed, page)
			}
			if onItsDay := tt.paidOn == 15; onItsDay != (owed == cents(late["amount_cents"])) {
				t.Fatalf("on %d March the bill owes %d cents, its boleto carries %v", tt.paidOn, owed, late["amount_cents"])
			}
			var paid int64
			if tt.by == "boleto" {
				// The boleto's box asks what the bank takes with it: its
				// amount on its day, the bill's fine and interest after.
				if shown := b.checkoutPayAmounts(t, bill); !slices.Contains(shown, owed) {
					t.Errorf("on %d March the checkout's boleto names %v cents; the bank takes %d", tt.paidOn, shown, owed)
				}
				if shown := payAmounts(t, b.payerPage(t, parcela.Links{}.PaymentURL(late["id"].(string)))); !slices.Contains(shown, owed) {
					t.Errorf("on %d March the boleto's own page names %v cents; the bank takes %d", tt.paidOn, shown, owed)
				}
				b.pay(t, late["id"].(string))
				for _, x := range b.bill(t, ids[1])["payments"].([]any) {
					if p := x.(map[string]any); p["id"] == late["id"] && p["status"] == "paid" {
						paid = cents(p["paid_amount_cents"])
					}
				}
			} else {
				visa := parcela.CardPayment{Number: "4111 1111 1111 1111", HolderName: "MARIA DA SILVA", ExpiryMonth: 12, ExpiryYear: 2030, CVV: "123",
					Installments: 1, ShownCents: owed}
				p, err := b.app.Checkout.PayByCard(context.Background(), parcela.Sandbox, bill.ID, bill.AuthenticationCode, visa)
				if err != nil || p.Status != parcela.PaymentPaid {
					t.Fatalf("card for the %d cents shown: %+v, %v", owed, p, err)
				}
				paid = p.AmountCents
			}
			if got := b.bill(t, ids[1]); got["status"] != "paid" || paid != owed {
				t.Errorf("paid on %d March by %s: bill %v, %d cents received; want paid, %d (the boleto carries %v)",
					tt.paidOn, tt.by, got["status"], paid, owed, late["amount_cents"])
			}
		}
	})
}

// checkoutTotal is the total the bill's checkout page shows the payer now.
func (b *bundle) checkoutTotal(t *testing.T, bill *parcela.Bill) int64 {
	t.Helper()
	m := regexp.MustCompile(`class="num total">([^<]+)<`).FindStringSubmatch(b.checkoutPage(t, bill))
	if m == nil {
		t.Fatal("checkout page without a total")
	}
	return brlCents(t, m[1])
}

// checkoutPayAmounts are the amounts the boxes of the bill's checkout
// page name now, their notes' included (a bolepix's box asks its Pix's
// amount, and its note what its barcode takes), in the order shown.
func (b *bundle) checkoutPayAmounts(t *testing.T, bill *parcela.Bill) []int64 {
	t.Helper()
	return payAmounts(t, b.checkoutPage(t, bill))
}

// payAmounts are the amounts a page's pay boxes name, their notes' included.
func payAmounts(t *testing.T, page string) []int64 {
	t.Helper()
	var amounts []int64
	for _, box := range regexp.MustCompile(`(?s)<section class="pay-box".*?</section>`).FindAllString(page, -1) {
		for _, m := range regexp.MustCompile(`class="pay-(?:amount|note)">([^<]+)<`).FindAllStringSubmatch(box, -1) {
			for _, a := range regexp.MustCompile(`R\$(?:&nbsp;|\s|\x{a0})*([0-9.]+,[0-9]{2})`).FindAllStringSubmatch(m[1], -1) {
				amounts = append(amounts, brlCents(t, a[1]))
			}
		}
	}
	return amounts
}

func brlCents(t *testing.T, shown string) int64 {
	t.Helper()
	c, err := strconv.ParseInt(regexp.MustCompile(`\D`).ReplaceAllString(shown, ""), 10, 64)
	if err != nil {
		t.Fatalf("%q is no amount: %v", shown, err)
	}
	return c
}

// checkoutPage is the bill's checkout page as the payer gets it now.
func (b *bundle) checkoutPage(t *testing.T, bill *parcela.Bill) string {
	t.Helper()
	return b.payerPage(t, parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode))
}

// payerPage is a payer's page at path as the payer gets it now.
func (b *bundle) payerPage(t *testing.T, path string) string {
	t.Helper()
	pages := web.New(web.Deps{Checkout: b.app.Checkout, Orders: b.app.Orders, CardCharges: b.app.Orders, Payments: b.app.Payments,
		Clock: b.clock, Environment: parcela.Sandbox, Links: sqldbtest.Links[parcela.Sandbox], Logger: slog.New(slog.DiscardHandler),
		Secret: []byte(strings.Repeat("k", 32))})
	rec := httptest.NewRecorder()
	pages.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != 200 {
		t.Fatalf("%s: %d:\n%s", path, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// An installment due on Saturday 1 May 2027, a holiday, is payable for its
// amount through Monday 3 May; paid on Tuesday it owes the fine and the
// interest of every day since its due date (2, 3 and 4 May), in the API,
// on the checkout and as the bank settles its boleto, where it owed only
// Tuesday's, counted from the Monday.
func TestInstallmentDueOnAHolidayOwesFromItsDueDate(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		ids := b.dueOnThe1st(t, offerBody(b.product()["id"].(string)), 4)
		i3, _, err := b.db.Bill(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, ids[3])
		if err != nil {
			t.Fatal(err)
		}
		if i3.DueDate.Format(time.DateOnly) != "2027-05-01" || i3.EffectiveDueDate.Format(time.DateOnly) != "2027-05-03" {
			t.Fatalf("installment 3 due %v, effective %v", i3.DueDate, i3.EffectiveDueDate)
		}
		b.clock.Set(time.Date(2027, 4, 25, 10, 0, 0, 0, parcela.SaoPaulo))
		boleto, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i3.ID, i3.AuthenticationCode, parcela.MethodBoleto)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			at   time.Time
			owed int64
		}{
			{time.Date(2027, 5, 3, 23, 59, 59, 0, time.UTC).Add(3 * time.Hour), i3.AmountCents}, // 23:59:59 in São Paulo
			{time.Date(2027, 5, 4, 3, 0, 0, 0, time.UTC), latePrice(i3.AmountCents, 3)},
			{time.Date(2027, 5, 4, 20, 0, 0, 0, parcela.SaoPaulo), latePrice(i3.AmountCents, 3)},
		} {
			b.clock.Set(tt.at)
			if got := cents(b.bill(t, i3.ID)["current_amount_cents"]); got != tt.owed {
				t.Errorf("at %v the API asks %d cents, want %d", tt.at, got, tt.owed)
			}
			if got := b.checkoutTotal(t, i3); got != tt.owed {
				t.Errorf("at %v the checkout asks %d cents, want %d", tt.at, got, tt.owed)
			}
		}
		paid := b.pay(t, boleto.ID)
		for _, x := range paid["payments"].([]any) {
			if p := x.(map[string]any); p["id"] == boleto.ID && (p["status"] != "paid" || cents(p["paid_amount_cents"]) != latePrice(i3.AmountCents, 3)) {
				t.Errorf("boleto paid on Tuesday: %v %v cents, want paid %d", p["status"], p["paid_amount_cents"], latePrice(i3.AmountCents, 3))
			}
		}
	})
}

// A waiver keeps a boleto priced before its installment was late, though
// a Pix beside it received part of the bill and the boleto asks more than
// the bill then owes, where it was canceled and voided: the payer lost the
// boleto they held, and the Pix, left the bill's only payment, kept the
// issue sweep from issuing another until it expired.
func TestWaiverKeepsABoletoPricedWithoutThePenalty(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		i1 := b.firstInstallment(t, "boleto", "pix") // due Monday 1 March 2027
		b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		boleto := openPayment(t, b.bill(t, i1.ID))
		b.clock.Set(time.Date(2027, 3, 1, 10, 0, 0, 0, parcela.SaoPaulo))
		pix, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix)
		if err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Hour)
		b.call("POST", "/external_api/v1/sandbox/payments/"+pix.ID+"/pay", map[string]any{"paid_amount_cents": 3000}).want(t, 200)
		got := b.call("PATCH", "/external_api/v1/bills/"+i1.ID,
			map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-12-31T23:59:59.999-03:00"}}).want(t, 200).JSON(t)
		for _, x := range got["payments"].([]any) {
			if p := x.(map[string]any); p["status"] != "unpaid" {
				t.Errorf("payment %v (%v) after a waiver of a penalty it does not carry: %v", p["payment_method"], p["id"], p["status"])
			}
		}
		if len(got["payments"].([]any)) != 2 || boleto["id"] == pix.ID {
			t.Fatalf("payments after the waiver: %v", got["payments"])
		}
	})
}

// A late installment paid by the whole amount of a Pix asked for on its
// checkout owed that amount, priced for the day the Pix is due (the
// company's payment expiry on): its GET, its listing and its bill.paid
// event say so. The reads took only the company's rates, priced the Pix
// for its issue day with no expiry, and said the bill owed less than the
// Pix carried, its fine and interest partly paid over for the seller to
// refund, where the event said otherwise.
func TestLateBillPaidByAPixOwedThePixsAmount(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		i1 := b.firstInstallment(t, "boleto", "pix")
		b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		b.clock.Set(time.Date(2027, 3, 10, 10, 0, 0, 0, parcela.SaoPaulo)) // its boleto expired: late
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
		pix, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix)
		if err != nil {
			t.Fatal(err)
		}
		if pix.AmountCents <= i1.AmountCents {
			t.Fatalf("late Pix of %d cents, want more than %d", pix.AmountCents, i1.AmountCents)
		}
		b.pay(t, pix.ID)
		evs, err := b.db.Events(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, i1.ID)
		if err != nil {
			t.Fatal(err)
		}
		var paid map[string]any
		if last := evs[len(evs)-1]; last.Event != "paid" || json.Unmarshal(last.Data, &paid) != nil {
			t.Fatalf("last event %s", last.Event)
		}
		listed := b.call("GET", "/external_api/v1/bills?status=paid&billing_id="+i1.BillingID, nil).want(t, 200).JSON(t)["results"].([]any)
		for i, f := range []map[string]any{b.bill(t, i1.ID), paid, listed[len(listed)-1].(map[string]any)} {
			if f["id"] != i1.ID || f["status"] != "paid" || cents(f["current_amount_cents"]) != pix.AmountCents || cents(f["received_amount_cents"]) != pix.AmountCents {
				t.Errorf("read %d: bill %v %v, owing %v, received %v; want paid owing %d, all received", i, f["id"], f["status"], f["current_amount_cents"], f["received_amount_cents"], pix.AmountCents)
			}
		}
	})
}
