package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"parcela"
)

// eventLog returns "entity:event" for every event of the bundle's company.
func (b *bundle) eventLog(t *testing.T) []string {
	t.Helper()
	evs, err := b.db.CompanyEvents(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Entity+":"+e.Event)
	}
	return out
}

func (b *bundle) bill(t *testing.T, id string) map[string]any {
	t.Helper()
	return b.call("GET", "/external_api/v1/bills/"+id, nil).want(t, 200).JSON(t)
}

// openPayment returns the bill's unpaid payment.
func openPayment(t *testing.T, bill map[string]any) map[string]any {
	t.Helper()
	for _, p := range bill["payments"].([]any) {
		if m := p.(map[string]any); m["status"] == "unpaid" {
			return m
		}
	}
	t.Fatalf("bill %v has no unpaid payment: %v", bill["id"], bill["payments"])
	return nil
}

func (b *bundle) pay(t *testing.T, paymentID string) map[string]any {
	t.Helper()
	return b.call("POST", "/external_api/v1/sandbox/payments/"+paymentID+"/pay", nil).want(t, 200).JSON(t)
}

func (b *bundle) sweep(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, f := range []func(context.Context) (parcela.SweepReport, error){b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue,
		b.sweeps.IssueDueInstallments, b.sweeps.RecoverIntents} {
		r, err := f(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, failure := range r.Failed {
			t.Fatalf("sweep %s failed on %s: %v", failure.Sweep, failure.Row.ID, failure.Err)
		}
	}
}

func (b *bundle) at(t *testing.T, when string) {
	t.Helper()
	ts, err := time.ParseInLocation("2006-01-02 15:04", when, parcela.SaoPaulo)
	if err != nil {
		t.Fatal(err)
	}
	b.clock.Set(ts)
	b.sweep(t)
}

func billIDs(order map[string]any) []string {
	var ids []string
	for _, x := range order["billings"].([]any)[0].(map[string]any)["bills"].([]any) {
		ids = append(ids, x.(map[string]any)["id"].(string))
	}
	return ids
}

func TestLifecycleFinanced(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"boleto", "pix"} {
		t.Run(method, func(t *testing.T) {
			each(t, func(t *testing.T, b *bundle) {
				offer, order := b.order()
				_, fin := configs(offer)
				oid := order["id"].(string)
				charged := b.call("POST", "/external_api/v1/orders/"+oid+"/charge", chargeBody(fin, method, 4)).want(t, 200).JSON(t)
				bills := billIDs(charged)

				// Down payment paid on time: the billing activates.
				dp := b.bill(t, bills[0])
				paid := b.pay(t, openPayment(t, dp)["id"].(string))
				if paid["status"] != "paid" || paid["billing"].(map[string]any)["status"] != "active" || paid["paid_at"] == nil {
					t.Fatalf("after down payment: %v / %v", paid["status"], paid["billing"])
				}
				// Paying it again changes nothing and writes nothing.
				before := len(b.eventLog(t))
				b.pay(t, openPaymentOrPaid(t, b.bill(t, bills[0])))
				if len(b.eventLog(t)) != before {
					t.Fatal("a second payment wrote events")
				}
				// Installment 1 falls on the first due day 10 at least a month
				// after the down payment (Nov 24): Sunday Jan 10, 2027,
				// effectively Monday the 11th. It is issued ten days before,
				// as bolepix.
				if ps := b.bill(t, bills[1])["payments"].([]any); len(ps) != 0 {
					t.Fatalf("installment issued too early: %v", ps)
				}
				b.at(t, "2027-01-01 09:00")
				i1 := b.bill(t, bills[1])
				orig := int64(i1["amount_cents"].(float64))
				p1 := openPayment(t, i1)
				if p1["payment_method"] != "boleto" || p1["pix_code"] == nil || p1["barcode_image_url"] == nil {
					t.Fatalf("installment payment %v", p1)
				}
				checkCode(t, "boleto", p1["barcode"].(string), orig)
				checkCode(t, "pix", p1["pix_code"].(string), orig)
				if !strings.HasPrefix(i1["due_date"].(string), "2027-01-10T23:59:59.999") || !strings.HasPrefix(i1["effective_due_date"].(string), "2027-01-11T23:59:59.999") {
					t.Fatalf("due date %v, effective %v", i1["due_date"], i1["effective_due_date"])
				}
				b.at(t, "2027-01-11 22:00")
				if got := b.bill(t, bills[1]); got["status"] != "pending" || got["current_amount_cents"] != float64(orig) {
					t.Fatalf("on the effective due date: %v %v", got["status"], got["current_amount_cents"])
				}
				// Late the day after Monday: overdue, with a 2% fine and the
				// 1%/month interest of the two days since its due date, Sunday.
				// Its boleto is no longer payable but waits a business day for
				// the bank's notice of a payment made on the 11th.
				b.at(t, "2027-01-12 10:00")
				late := b.bill(t, bills[1])
				want := latePrice(orig, 2)
				if late["status"] != "overdue" || late["current_amount_cents"] != float64(want) {
					t.Fatalf("late on Tuesday: status %v current %v, want %d", late["status"], late["current_amount_cents"], want)
				}
				if p := openPayment(t, late); p["expires_at"] != "2027-01-13T00:00:00.000-03:00" {
					t.Fatalf("boleto in its grace: %v", p)
				}
				// Then it expires and is re-issued, due three days later moved
				// to a business day (Saturday the 16th to Monday the 18th,
				// expiring as the grace, the 19th, ends), for what the bill owes
				// on its due date: 8 days since the 10th.
				b.at(t, "2027-01-13 00:10")
				p2 := openPayment(t, b.bill(t, bills[1]))
				due16 := latePrice(orig, 8)
				if p2["amount_cents"] != float64(due16) || p2["expires_at"] != "2027-01-20T00:00:00.000-03:00" {
					t.Fatalf("re-issued boleto %v, want %d cents expiring as the 19th ends", p2, due16)
				}
				checkCode(t, "boleto", p2["barcode"].(string), due16)
				paidLate := b.pay(t, p2["id"].(string))
				lp := paidLate["payments"].([]any)
				if last := lp[len(lp)-1].(map[string]any); last["paid_amount_cents"] != float64(due16) || paidLate["status"] != "paid" {
					t.Fatalf("paid late: %v", paidLate)
				}

				// Installment 2 (Feb 10) paid on time.
				b.at(t, "2027-02-01 09:00")
				b.pay(t, openPayment(t, b.bill(t, bills[2]))["id"].(string))

				// The last installment (Mar 10) finishes the billing and the order.
				b.at(t, "2027-03-02 09:00")
				b.pay(t, openPayment(t, b.bill(t, bills[3]))["id"].(string))
				done := b.call("GET", "/external_api/v1/orders/"+oid, nil).want(t, 200).JSON(t)
				billing := done["billings"].([]any)[0].(map[string]any)
				if done["status"] != "finished" || billing["status"] != "finished" || billing["finished_at"] == nil {
					t.Fatalf("finished? order %v billing %v", done["status"], billing["status"])
				}
				wantLog := []string{"order:in_progress", "billing:waiting_payment", "bill:pending", "bill:pending", "bill:pending", "bill:pending",
					"bill:paid", "billing:active", "bill:overdue", "bill:paid", "bill:paid", "bill:paid", "billing:finished", "order:finished"}
				if got := b.eventLog(t); !slices.Equal(got, wantLog) {
					t.Fatalf("events:\n got %v\nwant %v", got, wantLog)
				}
				// Paid bills cannot be waived or canceled.
				b.call("PATCH", "/external_api/v1/bills/"+bills[3], map[string]any{"bill": map[string]any{"disable_penalties_until": nil}}).want(t, 409)
			})
		})
	}
}

// latePrice is what a bill of orig cents costs days days late under the
// default rates: a 2% fine and 1% a month of simple interest.
func latePrice(orig, days int64) int64 {
	interest := parcela.RoundCents(parcela.RateFromInt(orig * days).Decimal().Mul(parcela.MustRate("0.01").Decimal()).Div(parcela.RateFromInt(30).Decimal()))
	return orig + parcela.MustRate("0.02").MulCents(orig) + interest
}

// openPaymentOrPaid returns the bill's paid payment id.
func openPaymentOrPaid(t *testing.T, bill map[string]any) string {
	for _, p := range bill["payments"].([]any) {
		if m := p.(map[string]any); m["status"] == "paid" {
			return m["id"].(string)
		}
	}
	t.Fatalf("no paid payment on %v", bill["id"])
	return ""
}

func TestLifecycleUpfront(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"pix", "boleto"} {
		t.Run(method, func(t *testing.T) {
			each(t, func(t *testing.T, b *bundle) {
				offer, order := b.order()
				up, _ := configs(offer)
				charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, method, 1)).want(t, 200).JSON(t)
				bill := billIDs(charged)[0]
				b.at(t, "2026-11-22 12:00")
				paid := b.pay(t, openPayment(t, b.bill(t, bill))["id"].(string))
				if paid["billing"].(map[string]any)["status"] != "finished" {
					t.Fatalf("upfront billing after payment: %v", paid["billing"])
				}
				want := []string{"order:in_progress", "billing:waiting_payment", "bill:pending", "bill:paid", "billing:finished", "order:finished"}
				if got := b.eventLog(t); !slices.Equal(got, want) {
					t.Fatalf("events:\n got %v\nwant %v", got, want)
				}
			})
		})
	}
}

// A Pix paid in its last seconds whose bank notice comes after its
// expires_at pays its bill, though the expiry sweep ran meanwhile, where
// the sweep had expired it and the notice was refused (409), the payer's
// money in no record and the order canceled. A notice of money paid once
// it expired is still refused.
func TestPixNoticeAfterItsExpiry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
		pix := openPayment(t, b.bill(t, billIDs(charged)[0]))
		expires, err := time.Parse(time.RFC3339Nano, pix["expires_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		b.clock.Set(expires.Add(time.Second))
		b.sweep(t)
		late := func(d time.Duration) map[string]any {
			return map[string]any{"paid_at": expires.Add(d).Format(time.RFC3339Nano)}
		}
		b.call("POST", "/external_api/v1/sandbox/payments/"+pix["id"].(string)+"/pay", late(0)).want(t, 422)
		got := b.call("POST", "/external_api/v1/sandbox/payments/"+pix["id"].(string)+"/pay", late(-2*time.Second)).want(t, 200).JSON(t)
		if got["status"] != "paid" || got["billing"].(map[string]any)["status"] != "active" {
			t.Fatalf("a Pix paid before its expiry, notified after: bill %v, billing %v", got["status"], got["billing"].(map[string]any)["status"])
		}
	})
}

func TestDownPaymentExpires(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		oid := order["id"].(string)
		b.call("POST", "/external_api/v1/orders/"+oid+"/charge", chargeBody(fin, "pix", 3)).want(t, 200)
		b.at(t, "2026-11-24 15:29") // a minute before the 72 h expiry
		if o := b.call("GET", "/external_api/v1/orders/"+oid, nil).want(t, 200).JSON(t); o["status"] != "in_progress" {
			t.Fatalf("expired early: %v", o["status"])
		}
		// Its Pix waits an hour for the bank's notice of a payment made in
		// its last seconds, then expires with the order.
		b.at(t, "2026-11-24 16:29")
		if o := b.call("GET", "/external_api/v1/orders/"+oid, nil).want(t, 200).JSON(t); o["status"] != "in_progress" {
			t.Fatalf("expired within the notice grace: %v", o["status"])
		}
		b.at(t, "2026-11-24 16:31")
		o := b.call("GET", "/external_api/v1/orders/"+oid, nil).want(t, 200).JSON(t)
		billing := o["billings"].([]any)[0].(map[string]any)
		if o["status"] != "canceled" || o["cancelation_reason"] != "expired" || billing["status"] != "canceled" || billing["cancelation_reason"] != "down_payment_not_paid" {
			t.Fatalf("after expiry: order %v (%v), billing %v (%v)", o["status"], o["cancelation_reason"], billing["status"], billing["cancelation_reason"])
		}
		for _, x := range billing["bills"].([]any) {
			bill := x.(map[string]any)
			if bill["status"] != "canceled" {
				t.Fatalf("bill %v", bill["status"])
			}
			for _, p := range bill["payments"].([]any) {
				if s := p.(map[string]any)["status"]; s != "expired" && s != "canceled" {
					t.Fatalf("payment %v", s)
				}
			}
		}
		want := []string{"order:in_progress", "billing:waiting_payment", "bill:pending", "bill:pending", "bill:pending",
			"bill:canceled", "bill:canceled", "bill:canceled", "billing:canceled", "order:canceled"}
		if got := b.eventLog(t); !slices.Equal(got, want) {
			t.Fatalf("events:\n got %v\nwant %v", got, want)
		}
	})
}

func TestSandboxActions(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "boleto", 3)).want(t, 200).JSON(t)
		bills := billIDs(charged)
		pid := openPayment(t, b.bill(t, bills[0]))["id"].(string)
		// Production has no sandbox routes.
		b.send(b.production.URL, b.prodToken, "POST", "/external_api/v1/sandbox/payments/"+pid+"/pay", nil, nil).want(t, 404)
		b.send(b.sandbox.URL, b.otherToken, "POST", "/external_api/v1/sandbox/payments/"+pid+"/pay", nil, nil).want(t, 404)
		fieldCodes(t, b.call("POST", "/external_api/v1/sandbox/payments/"+pid+"/pay", map[string]any{"paid_amount_cents": 0}))
		// Expire the down payment by hand: the order is canceled.
		got := b.call("POST", "/external_api/v1/sandbox/payments/"+pid+"/expire", nil).want(t, 200).JSON(t)
		if got["status"] != "canceled" || got["billing"].(map[string]any)["cancelation_reason"] != "down_payment_not_paid" {
			t.Fatalf("expired down payment: %v %v", got["status"], got["billing"])
		}
		if r := b.call("POST", "/external_api/v1/sandbox/payments/"+pid+"/pay", nil).want(t, 409); r.JSON(t)["code"] != "invalid_state" {
			t.Fatalf("paying an expired payment: %s", r.Body)
		}
	})
}

func TestPenaltyWaiverAndBillingCancel(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
		bills := billIDs(charged)
		b.pay(t, openPayment(t, b.bill(t, bills[0]))["id"].(string))
		b.at(t, "2027-01-01 08:00") // its boleto is issued
		// Waive penalties on installment 1 (Jan 10, effectively the 11th) until Jan 20.
		r := b.call("PATCH", "/external_api/v1/bills/"+bills[1], map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-01-20T23:59:59.999-03:00"}}).want(t, 200).JSON(t)
		if r["disable_penalties_until"] != "2027-01-20T23:59:59.999-03:00" {
			t.Fatalf("waiver %v", r["disable_penalties_until"])
		}
		b.at(t, "2027-01-18 10:00") // late but for the waiver: not overdue
		if got := b.bill(t, bills[1]); got["status"] != "pending" || got["current_amount_cents"] != got["original_amount_cents"] {
			t.Fatalf("waived bill: %v %v of %v", got["status"], got["current_amount_cents"], got["original_amount_cents"])
		}
		b.call("PATCH", "/external_api/v1/bills/"+bills[1], map[string]any{"bill": map[string]any{"disable_penalties_until": nil}}).want(t, 200)
		b.at(t, "2027-01-18 10:10")
		if got := b.bill(t, bills[1]); got["status"] != "overdue" || got["current_amount_cents"].(float64) <= got["original_amount_cents"].(float64) {
			t.Fatalf("cleared waiver still waives: %v %v", got["status"], got["current_amount_cents"])
		}
		fieldCodes(t, b.call("PATCH", "/external_api/v1/bills/"+bills[1], map[string]any{"bill": map[string]any{}}))

		billingID := charged["billings"].([]any)[0].(map[string]any)["id"].(string)
		fieldCodes(t, b.call("POST", "/external_api/v1/billings/"+billingID+"/cancel", map[string]any{"cancelation_reason": "because"}))
		c := b.call("POST", "/external_api/v1/billings/"+billingID+"/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}).want(t, 200).JSON(t)
		if c["status"] != "canceled" {
			t.Fatalf("billing %v", c["status"])
		}
		statuses := []string{}
		for _, x := range c["bills"].([]any) {
			statuses = append(statuses, x.(map[string]any)["status"].(string))
		}
		if fmt.Sprint(statuses) != "[paid canceled canceled]" {
			t.Fatalf("bill statuses after cancel: %v (a paid bill stays paid)", statuses)
		}
		o := b.call("GET", "/external_api/v1/orders/"+order["id"].(string), nil).want(t, 200).JSON(t)
		if o["status"] != "canceled" {
			t.Fatalf("order after billing cancel: %v", o["status"])
		}
		b.call("POST", "/external_api/v1/billings/"+billingID+"/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}).want(t, 409)
		b.send(b.sandbox.URL, b.otherToken, "GET", "/external_api/v1/billings/"+billingID, nil, nil).want(t, 404)
	})
}

// A bill turns overdue once, however often the sweeps run over it (its
// boleto expiring and re-issued meanwhile); canceling the order then
// cancels its open bills and its billing, each with its event.
func TestOverdueOnceThenOrderCanceled(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		oid := order["id"].(string)
		bills := billIDs(b.call("POST", "/external_api/v1/orders/"+oid+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t))
		b.pay(t, openPayment(t, b.bill(t, bills[0]))["id"].(string))
		for _, at := range []string{"2027-01-01 08:00", "2027-01-12 10:00", "2027-01-12 11:00", "2027-01-13 00:10", "2027-01-14 09:00", "2027-01-20 09:00"} {
			b.at(t, at)
		}
		if got := b.bill(t, bills[1]); got["status"] != "overdue" {
			t.Fatalf("installment 1 is %v", got["status"])
		}
		b.call("POST", "/external_api/v1/orders/"+oid+"/cancel", map[string]any{"cancelation_reason": "customer_dropout"}).want(t, 200)
		want := []string{"order:in_progress", "billing:waiting_payment", "bill:pending", "bill:pending", "bill:pending",
			"bill:paid", "billing:active", "bill:overdue", "bill:canceled", "bill:canceled", "billing:canceled", "order:canceled"}
		if got := b.eventLog(t); !slices.Equal(got, want) {
			t.Fatalf("events:\n got %v\nwant %v", got, want)
		}
	})
}

// A waiver holds back a late installment's overdue as well as its
// penalties: a bill is late after the later of its effective due date and
// its waiver, and only late bills turn overdue. It turned overdue (its
// event sent) at its effective due date, and a seller's integration that
// duns on overdue dunned a payer inside the extension the seller granted
// (an audit). Neither the sweep's selection nor its decision takes it
// before the waiver ends; a waiver set once it is overdue leaves it so.
func TestOverdueEventUnderAWaiver(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		bills := billIDs(b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t))
		b.pay(t, openPayment(t, b.bill(t, bills[0]))["id"].(string))
		b.at(t, "2027-01-01 08:00") // installments 1 (due Sunday Jan 10, effectively the 11th) and 2 are issued
		const until = "2027-01-20T23:59:59.999-03:00"
		b.call("PATCH", "/external_api/v1/bills/"+bills[1], map[string]any{"bill": map[string]any{"disable_penalties_until": until}}).want(t, 200)
		auth := parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}
		lastEvent := func() (string, map[string]any) {
			t.Helper()
			evs, err := b.db.Events(context.Background(), auth, bills[1])
			if err != nil {
				t.Fatal(err)
			}
			var data map[string]any
			if err := json.Unmarshal(evs[len(evs)-1].Data, &data); err != nil {
				t.Fatal(err)
			}
			return evs[len(evs)-1].Event, data
		}
		for _, at := range []string{"2027-01-12 10:00", "2027-01-20 23:59"} {
			b.at(t, at)
			rows, err := b.db.LateInstallments(context.Background(), parcela.Due{Now: b.clock.Now(), Companies: []string{b.company.ID}, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.BillID == bills[1] {
					t.Errorf("%s: the waived bill is selected as late", at)
				}
			}
			got := b.bill(t, bills[1])
			if ev, _ := lastEvent(); ev == "overdue" || got["status"] != "pending" || got["current_amount_cents"] != got["original_amount_cents"] {
				t.Fatalf("%s, under a waiver to %s: status %v, last event %s, owing %v of %v", at, until, got["status"], ev, got["current_amount_cents"], got["original_amount_cents"])
			}
		}
		b.at(t, "2027-01-21 10:00")
		ev, data := lastEvent()
		orig := cents(data["original_amount_cents"])
		if ev != "overdue" || data["status"] != "overdue" || cents(data["current_amount_cents"]) != latePrice(orig, 1) {
			t.Fatalf("the day after the waiver: %s event, %v, owing %v of %d, want overdue owing %d", ev, data["status"], data["current_amount_cents"], orig, latePrice(orig, 1))
		}

		// Installment 2, overdue before any waiver, stays overdue under one.
		b.at(t, "2027-02-01 08:00") // its boleto is issued
		b.at(t, "2027-02-11 10:00")
		if got := b.bill(t, bills[2]); got["status"] != "overdue" {
			t.Fatalf("installment 2 the day after its due date: %v", got["status"])
		}
		b.call("PATCH", "/external_api/v1/bills/"+bills[2], map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-02-28T23:59:59.999-03:00"}}).want(t, 200)
		b.at(t, "2027-02-12 10:00")
		if got := b.bill(t, bills[2]); got["status"] != "overdue" || got["current_amount_cents"] != got["original_amount_cents"] {
			t.Fatalf("installment 2 waived once overdue: %v owing %v of %v", got["status"], got["current_amount_cents"], got["original_amount_cents"])
		}
	})
}
