package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/api"
	"parcela/bank"
	"parcela/server"
	"parcela/sqldb/sqldbtest"
)

// Production issues no payment without a provider of its own: the
// simulated bank serves the sandbox only, unless the operator opts in.
func TestProductionNeedsAProvider(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		app := parcela.NewServices(b.db, parcela.ProvidersByEnvironment{parcela.Sandbox: bank.NewSimulated()}, nil, b.clock, sqldbtest.Links)
		svc := server.ServicesOf(app, b.db)
		prod := httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Production, Clock: b.clock,
			PublicURL: sqldbtest.Links[parcela.Production].PublicURL, OpenAPI: api.Spec}))
		t.Cleanup(prod.Close)
		sandbox := httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Sandbox, Clock: b.clock,
			PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}))
		t.Cleanup(sandbox.Close)

		for _, l := range []struct {
			url, token string
			status     int
		}{{prod.URL, b.prodToken, 503}, {sandbox.URL, b.token, 200}} {
			p := b.send(l.url, l.token, "POST", "/external_api/v1/products", productBody(), nil).want(t, 201).JSON(t)
			offer := b.send(l.url, l.token, "POST", "/external_api/v1/offers", offerBody(p["id"].(string)), nil).want(t, 201).JSON(t)
			order := b.send(l.url, l.token, "POST", "/external_api/v1/orders", orderBody(offer["id"].(string)), nil).want(t, 201).JSON(t)
			up, _ := configs(offer)
			path := "/external_api/v1/orders/" + order["id"].(string)
			r := b.send(l.url, l.token, "POST", path+"/charge", chargeBody(up, "pix", 1), nil).want(t, l.status)
			if l.status == 200 {
				continue
			}
			if prob := r.JSON(t); prob["code"] != "unavailable" || !strings.Contains(prob["detail"].(string), "no payment provider") {
				t.Fatalf("production charge: %s", r.Body)
			}
			if got := b.send(l.url, l.token, "GET", path, nil, nil).want(t, 200).JSON(t); got["status"] != "pending" {
				t.Fatalf("order %v after a refused charge", got["status"])
			}
			// A mistaken charge is told its mistake first: answered 503, a
			// client retried what no retry mends.
			if prob := b.send(l.url, l.token, "POST", path+"/charge", chargeBody(up, "credit_card", 1), nil).want(t, 422).JSON(t); prob["code"] != "credit_card_not_supported" {
				t.Fatalf("a card charge in production without a provider: %v", prob)
			}
			bad := chargeBody(up, "pix", 1)
			bad["due_day"] = 99
			b.send(l.url, l.token, "POST", path+"/charge", bad, nil).want(t, 422)
		}
	})
}

// A boleto is payable through the end of its due day moved to a business
// day, and expires one business day later; a Pix charge expires at its
// instant. Charged on a Saturday, due the next Saturday afternoon.
func TestBoletoDownPaymentPayableThroughItsDay(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		body := offerBody(b.product()["id"].(string))
		up := body["payment_configurations"].([]any)[0].(map[string]any)
		up["expires_in_hours"] = 168
		offer := b.call("POST", "/external_api/v1/offers", body).want(t, 201).JSON(t)
		upID, _ := configs(offer)
		charge := func(method string) (orderID string, bill map[string]any) {
			order := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
			charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(upID, method, 1)).want(t, 200).JSON(t)
			return order["id"].(string), b.bill(t, billIDs(charged)[0])
		}
		paid, paidBill := charge("boleto")
		pix, pixBill := charge("pix")
		late, lateBill := charge("boleto")

		if p := openPayment(t, pixBill); p["expires_at"] != "2026-11-28T15:30:00.000-03:00" {
			t.Fatalf("pix expires %v", p["expires_at"])
		}
		for _, bill := range []map[string]any{paidBill, lateBill} {
			if p := openPayment(t, bill); p["expires_at"] != "2026-12-02T00:00:00.000-03:00" || bill["effective_due_date"] != "2026-11-30T23:59:59.999-03:00" {
				t.Fatalf("boleto expires %v, bill effective %v; want the millisecond after Tuesday's end, and Monday's end", p["expires_at"], bill["effective_due_date"])
			}
		}
		status := func(id string) string {
			return b.call("GET", "/external_api/v1/orders/"+id, nil).want(t, 200).JSON(t)["status"].(string)
		}

		b.at(t, "2026-11-28 16:31") // past the Pix's notice grace
		if status(pix) != "canceled" || status(paid) != "in_progress" || status(late) != "in_progress" {
			t.Fatalf("Saturday after the due instant: pix %s, boletos %s %s", status(pix), status(paid), status(late))
		}
		b.at(t, "2026-11-30 23:59")
		if got := b.bill(t, lateBill["id"].(string)); status(late) != "in_progress" || got["current_amount_cents"] != got["original_amount_cents"] {
			t.Fatalf("Monday night: %s, %v of %v", status(late), got["current_amount_cents"], got["original_amount_cents"])
		}
		// Tuesday the bank reports a payment made on Monday: no fine, no interest.
		b.at(t, "2026-12-01 10:00")
		got := b.call("POST", "/external_api/v1/sandbox/payments/"+openPayment(t, paidBill)["id"].(string)+"/pay",
			map[string]any{"paid_at": "2026-11-30T20:00:00.000-03:00"}).want(t, 200).JSON(t)
		if p := got["payments"].([]any)[0].(map[string]any); got["status"] != "paid" || p["paid_amount_cents"] != got["original_amount_cents"] {
			t.Fatalf("paid Monday: %v, %v", got["status"], p)
		}
		b.at(t, "2026-12-01 23:59")
		if status(late) != "in_progress" {
			t.Fatalf("expired within its grace: %s", status(late))
		}
		// Wednesday, the day the bank notices a payment made on Tuesday,
		// the order waits; it lapses after it.
		b.at(t, "2026-12-02 23:59")
		if status(late) != "in_progress" {
			t.Fatalf("on the day of its grace's notice: %s", status(late))
		}
		b.at(t, "2026-12-03 00:01")
		o := b.call("GET", "/external_api/v1/orders/"+late, nil).want(t, 200).JSON(t)
		if o["status"] != "canceled" || o["cancelation_reason"] != "expired" {
			t.Fatalf("after the grace and its notice: %v (%v)", o["status"], o["cancelation_reason"])
		}
		if status(paid) != "finished" {
			t.Fatalf("paid order %s", status(paid))
		}
	})
}

// A settlement below the payment's amount is recorded on it and pays
// nothing; the rest completes it. A settlement that cannot have happened
// is refused.
func TestSettlementMustMatch(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, p, amount := b.firstBillByPix(t)
		pay := func(body map[string]any) resp {
			return b.call("POST", "/external_api/v1/sandbox/payments/"+p["id"].(string)+"/pay", body)
		}
		for name, body := range map[string]map[string]any{
			"paid_at":  {"paid_at": "2026-11-21T15:29:59.999-03:00"}, // before the payment was issued
			"paid_at ": {"paid_at": "2026-11-21T15:30:01.000-03:00"}, // in the future
			// The instant it was issued, at an offset RFC 3339 has not.
			"paid_at  ":         {"paid_at": "2026-11-22T18:30:00.000+24:00"},
			"paid_amount_cents": {"paid_amount_cents": 0},
			// The most one boleto or Pix can carry, plus a cent.
			"paid_amount_cents ": {"paid_amount_cents": int64(parcela.MaxAmountCents) + 1},
		} {
			prob := pay(body).want(t, 422).JSON(t)
			if errs := prob["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["field"] != strings.TrimSpace(name) {
				t.Fatalf("%v: %v", body, prob)
			}
		}

		b.clock.Advance(time.Hour)
		partial := pay(map[string]any{"paid_amount_cents": amount - 100}).want(t, 200).JSON(t)
		pp := partial["payments"].([]any)[0].(map[string]any)
		if partial["status"] != "pending" || partial["billing"].(map[string]any)["status"] != "waiting_payment" ||
			pp["status"] != "unpaid" || pp["paid_amount_cents"] != float64(amount-100) || pp["paid_at"] == nil || partial["paid_at"] != nil {
			t.Fatalf("after a partial settlement: bill %v, billing %v, payment %v", partial["status"], partial["billing"], pp)
		}
		// Paying the rest (the default) completes it.
		done := pay(nil).want(t, 200).JSON(t)
		dp := done["payments"].([]any)[0].(map[string]any)
		if done["status"] != "paid" || dp["status"] != "paid" || dp["paid_amount_cents"] != float64(amount) || done["billing"].(map[string]any)["status"] != "active" {
			t.Fatalf("after the rest: bill %v, payment %v", done["status"], dp)
		}
		var events []string
		for _, e := range b.eventLog(t) {
			if e == "bill:paid" || e == "billing:active" {
				events = append(events, e)
			}
		}
		if got, _ := json.Marshal(events); string(got) != `["bill:paid","billing:active"]` {
			t.Fatalf("events %s", got)
		}
	})
}

// Two payments of one bill, each settled in part, that together received
// what the bill owes pay it: the settlement that completes the sum pays
// the bill. They used to leave it open for ever, owing nothing or less
// than nothing, its checkout offering a card for R$ 0,00 or failing. The
// Pix that received most of it is kept paid for what it received, and
// both are voided at the provider, which would take their rest: the Pix
// was canceled, as if its money had never come.
func TestPartialSettlementsThatCompleteTheBillPayIt(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		log := b.startVoids(t)
		bill, pix, amount := b.firstBillByPix(t)
		boleto, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, bill["id"].(string), bill["authentication_code"].(string), parcela.MethodBoleto)
		if err != nil || boleto.AmountCents != amount {
			t.Fatalf("boleto beside the Pix: %+v, %v", boleto, err)
		}
		b.clock.Advance(time.Hour)
		pay := func(id string, cents int64) map[string]any {
			return b.call("POST", "/external_api/v1/sandbox/payments/"+id+"/pay", map[string]any{"paid_amount_cents": cents}).want(t, 200).JSON(t)
		}
		if got := pay(pix["id"].(string), amount-100); got["status"] != "pending" || cents(got["received_amount_cents"]) != amount-100 ||
			cents(got["current_amount_cents"]) != amount {
			t.Fatalf("after part of the Pix: bill %v, received %v of %v", got["status"], got["received_amount_cents"], got["current_amount_cents"])
		}
		got := pay(boleto.ID, 100)
		if got["status"] != "paid" || cents(got["received_amount_cents"]) != amount || got["billing"].(map[string]any)["status"] != "active" {
			t.Fatalf("after the rest on the boleto: bill %v, billing %v", got["status"], got["billing"].(map[string]any)["status"])
		}
		for _, p := range got["payments"].([]any) {
			p := p.(map[string]any)
			want := map[string]int64{pix["id"].(string): amount - 100, boleto.ID: 100}[p["id"].(string)]
			if p["status"] != "paid" || cents(p["paid_amount_cents"]) != want {
				t.Errorf("payment %v: %v with %v received, want paid with %d", p["payment_method"], p["status"], p["paid_amount_cents"], want)
			}
		}
		eventually(t, 15*time.Second, "the Pix and the boleto paid in part are voided at the provider", func() bool {
			return log.voided(pix["id"].(string)) && log.voided(boleto.ID)
		})
	})
}

// firstBillByPix charges an order financed in three bills, its down
// payment by Pix, and returns the first bill, its Pix and the Pix's amount.
func (b *bundle) firstBillByPix(t *testing.T) (bill, pix map[string]any, amount int64) {
	t.Helper()
	offer, order := b.order()
	_, fin := configs(offer)
	charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
	bill = b.bill(t, billIDs(charged)[0])
	pix = openPayment(t, bill)
	return bill, pix, int64(pix["amount_cents"].(float64))
}

// A first bill owes no penalty, so a waiver of its penalties changes
// nothing it owes and cancels none of its payments, where its boleto,
// asking more than the bill owed after a part of its Pix was received,
// was canceled and voided: no sweep issues a first bill another, and the
// Pix, due at its instant, was left the only way to pay it.
func TestWaiverOfAFirstBillCancelsNothing(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		bill, pix, amount := b.firstBillByPix(t)
		if _, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, bill["id"].(string), bill["authentication_code"].(string), parcela.MethodBoleto); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Hour)
		b.call("POST", "/external_api/v1/sandbox/payments/"+pix["id"].(string)+"/pay", map[string]any{"paid_amount_cents": amount - 100}).want(t, 200)
		got := b.call("PATCH", "/external_api/v1/bills/"+bill["id"].(string),
			map[string]any{"bill": map[string]any{"disable_penalties_until": "2027-12-31T23:59:59.999-03:00"}}).want(t, 200).JSON(t)
		for _, x := range got["payments"].([]any) {
			if p := x.(map[string]any); p["status"] != "unpaid" {
				t.Errorf("payment %v (%v) after a waiver of a first bill: %v", p["payment_method"], p["id"], p["status"])
			}
		}
		if got["status"] != "pending" || got["id"] != bill["id"] {
			t.Fatalf("first bill after the waiver: %v", got["status"])
		}
	})
}

// A late installment's boleto and a Pix beside it, each paid in part on
// the Monday the boleto's Saturday due date moves to, summing to what the
// boleto asked, pay the bill, as the boleto alone paid its amount would:
// the bill stayed overdue, owing the two days' interest neither carried.
func TestPartialSettlementsOfALateInstallmentPayIt(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		i1 := b.firstInstallment(t, "boleto", "pix") // due Monday 1 March 2027
		b.clock.Set(time.Date(2027, 2, 20, 9, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.IssueDueInstallments)
		b.clock.Set(time.Date(2027, 3, 10, 10, 0, 0, 0, parcela.SaoPaulo))
		b.runSweeps(t, b.sweeps.ExpireDuePayments, b.sweeps.MarkOverdue, b.sweeps.IssueDueInstallments)
		late := openPayment(t, b.bill(t, i1.ID)) // due Saturday 13 March
		pix, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, i1.ID, i1.AuthenticationCode, parcela.MethodPix)
		if err != nil || pix.AmountCents != cents(late["amount_cents"]) {
			t.Fatalf("Pix beside the late boleto: %+v, %v", pix, err)
		}
		b.clock.Set(time.Date(2027, 3, 15, 11, 0, 0, 0, parcela.SaoPaulo))
		pay := func(id string, amount int64, at string) map[string]any {
			return b.call("POST", "/external_api/v1/sandbox/payments/"+id+"/pay", map[string]any{"paid_amount_cents": amount, "paid_at": at}).want(t, 200).JSON(t)
		}
		pay(pix.ID, 5000, "2027-03-15T09:00:00.000-03:00")
		got := pay(late["id"].(string), pix.AmountCents-5000, "2027-03-15T10:00:00.000-03:00")
		if got["status"] != "paid" || got["paid_at"] != "2027-03-15T10:00:00.000-03:00" {
			t.Fatalf("after the boleto's part: bill %v, paid at %v", got["status"], got["paid_at"])
		}
	})
}

// A bill paid over (its Pix received part, then its boleto its whole
// amount, as a payer holding both might) keeps what each received, and
// says what it received in all, the excess the seller's to refund.
func TestOverpaidBillSaysWhatItReceived(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		bill, pix, amount := b.firstBillByPix(t)
		boleto, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, bill["id"].(string), bill["authentication_code"].(string), parcela.MethodBoleto)
		if err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Hour)
		b.call("POST", "/external_api/v1/sandbox/payments/"+pix["id"].(string)+"/pay", map[string]any{"paid_amount_cents": 3000}).want(t, 200)
		got := b.call("POST", "/external_api/v1/sandbox/payments/"+boleto.ID+"/pay", map[string]any{"paid_amount_cents": boleto.AmountCents}).want(t, 200).JSON(t)
		if got["status"] != "paid" || cents(got["received_amount_cents"]) != amount+3000 {
			t.Fatalf("bill %v, received %v; want paid, %d received", got["status"], got["received_amount_cents"], amount+3000)
		}
		for _, x := range got["payments"].([]any) {
			if p := x.(map[string]any); p["status"] != "paid" {
				t.Errorf("payment %v: %v with %v received", p["payment_method"], p["status"], p["paid_amount_cents"])
			}
		}
	})
}
