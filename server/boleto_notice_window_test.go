package server_test

import (
	"html"
	"strings"
	"testing"
	"time"

	"parcela"
)

// A first bill's boleto is payable through its settlement grace, and a
// payment made on its last day is noticed the next business day. Its
// expiry canceled the order at the grace's end, and that notice was then
// refused: the payer's money at the bank on no record. The boleto now
// expires, and its order lapses, only once the business day after its
// last day has passed. Meanwhile the pages say its time to pay is over
// and offer nothing.
//
// Charged on Thursday 26 November 2026 at 15:30, due in 48 hours
// (Saturday), payable through Monday 30 and the grace, Tuesday 1 December:
// it expires as Wednesday begins.
func TestFirstBillBoletoWaitsForTheNoticeOfItsLastDay(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		charge := func() (order, bill map[string]any) {
			order, bill = b.upfrontBoletoOnThursday(t)
			if got := openPayment(t, bill)["expires_at"]; got != "2026-12-02T00:00:00.000-03:00" {
				t.Fatalf("the boleto expires at %v: the scenario is wrong", got)
			}
			return order, bill
		}
		status := func(order map[string]any) string {
			return b.call("GET", "/external_api/v1/orders/"+order["id"].(string), nil).want(t, 200).JSON(t)["status"].(string)
		}
		noticed, noticedBill := charge()
		silent, silentBill := charge()
		boleto := openPayment(t, noticedBill)["id"].(string)

		// Wednesday: the boleto is past its expires_at, its notice not yet
		// surely come. Both orders wait; the pages offer nothing.
		b.at(t, "2026-12-02 10:00")
		for _, o := range []map[string]any{noticed, silent} {
			if got := status(o); got != "in_progress" {
				t.Fatalf("Wednesday, the day of the notice of a payment made on Tuesday: order %s", got)
			}
		}
		page := b.payerPage(t, "/checkout/bills/"+silentBill["id"].(string)+"?code="+silentBill["authentication_code"].(string))
		if !strings.Contains(page, "Prazo encerrado") || strings.Contains(page, "Pague agora") || strings.Contains(page, "Linha digitável") {
			t.Errorf("checkout in the notice's day offers the expired boleto, or does not say its time is over:\n%s", page)
		}

		// The bank's notice of Tuesday's payment pays the bill.
		b.call("POST", "/external_api/v1/sandbox/payments/"+boleto+"/pay", map[string]any{"paid_at": "2026-12-01T16:00:00-03:00"}).want(t, 200)
		if got := b.bill(t, noticedBill["id"].(string))["status"]; got != "paid" {
			t.Fatalf("the bill noticed paid on Tuesday is %v", got)
		}

		// At the end of Wednesday the silent order's boleto expires and the
		// order lapses; the noticed one stays paid.
		b.at(t, "2026-12-02 23:59")
		if got := status(silent); got != "in_progress" {
			t.Fatalf("the last minute of the notice's day: order %s", got)
		}
		b.at(t, "2026-12-03 00:00")
		if got := status(silent); got != "canceled" {
			t.Fatalf("after the notice's day: order %s, want canceled", got)
		}
		if got := status(noticed); got == "canceled" {
			t.Fatal("the paid order was canceled")
		}
	})
}

// In the notice window the payer's pages do not send a payer who may have
// paid on the last day to buy again: they say a payment made in time is
// still to be confirmed, and check for it (a review: they said the order
// "será cancelado" and "faça um novo pedido pela oferta", and did not
// check, over a window that spans a weekend or Carnival).
func TestNoticeWindowPagesWaitForAPaymentMadeInTime(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		order, bill := b.upfrontBoletoOnThursday(t)
		boleto := openPayment(t, bill)["id"].(string)
		b.at(t, "2026-12-02 10:00") // the notice's day: the order waits for it
		u := order["url"].(string)
		for name, path := range map[string]string{
			"checkout": "/checkout/bills/" + bill["id"].(string) + "?code=" + bill["authentication_code"].(string),
			"payment":  "/checkout/payments/" + boleto,
			"order":    u[strings.Index(u, "/pay/"):],
		} {
			page := html.UnescapeString(b.payerPage(t, path))
			if strings.Contains(page, "novo pedido") || !strings.Contains(page, "Se você já pagou") && !strings.Contains(page, "Se você pagou a tempo") {
				t.Errorf("the %s page in the notice window sends the payer to order again, or says nothing of a payment made in time:\n%s", name, page)
			}
			if !strings.Contains(page, "data-refresh=") {
				t.Errorf("the %s page in the notice window does not check for the payment", name)
			}
			// Not "Expirado" beside "se você já pagou" (a review): the
			// payer's payment, if made, is not lost.
			if strings.Contains(page, ">Expirado<") {
				t.Errorf("the %s page in the notice window calls the payment expired", name)
			}
		}
	})
}

// A company without settlement grace: the first bill's boleto, due
// Saturday 28 November 2026 and payable through Monday 30, expires at
// Tuesday 1 December 00:00, exactly BoletoNoticeCutoff of Wednesday. Its
// notice has surely come by the end of Tuesday, so at Wednesday 00:00 the
// order lapses. The expiry sweep's
// "expires_at <= cutoff" is tested at its equality only by such a boleto
// (with grace, expires_at is 23:59:59.999 and never equals a cutoff):
// written "<", the order waited to Friday and no test noticed (a review).
func TestNoGraceFirstBillBoletoLapsesAtItsNoticeDeadline(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.setNoBoletoGrace(t)
		order, bill := b.upfrontBoletoOnThursday(t)
		if got := openPayment(t, bill)["expires_at"]; got != "2026-12-01T00:00:00.000-03:00" {
			t.Fatalf("the boleto expires at %v: the scenario is wrong", got)
		}
		status := func() string {
			return b.call("GET", "/external_api/v1/orders/"+order["id"].(string), nil).want(t, 200).JSON(t)["status"].(string)
		}
		exp, _ := time.Parse(time.RFC3339Nano, openPayment(t, bill)["expires_at"].(string))
		deadline := parcela.BoletoNoticeDeadline(exp)
		t.Logf("expires %s, deadline %s, cutoff at deadline %s", exp.In(parcela.SaoPaulo), deadline.In(parcela.SaoPaulo), parcela.BoletoNoticeCutoff(deadline).In(parcela.SaoPaulo))
		b.at(t, deadline.Add(-time.Minute).In(parcela.SaoPaulo).Format("2006-01-02 15:04"))
		if got := status(); got != "in_progress" {
			t.Fatalf("a minute before the notice deadline: order %s", got)
		}
		b.at(t, deadline.In(parcela.SaoPaulo).Format("2006-01-02 15:04"))
		if got := status(); got != "canceled" {
			t.Fatalf("at the notice deadline %s: order %s, want canceled", deadline.In(parcela.SaoPaulo), got)
		}
	})
}

// upfrontBoletoOnThursday charges an order of the offer upfront by boleto
// on Thursday 26 November 2026 at 15:30: due Saturday, payable through
// Monday 30 and, with the default grace, Tuesday 1 December.
func (b *bundle) upfrontBoletoOnThursday(t *testing.T) (order, bill map[string]any) {
	t.Helper()
	b.clock.Set(time.Date(2026, 11, 26, 15, 30, 0, 0, parcela.SaoPaulo))
	offer := b.offer()
	up, _ := configs(offer)
	order = b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
	charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, "boleto", 1)).want(t, 200).JSON(t)
	return order, b.bill(t, billIDs(charged)[0])
}

// A boleto is payable through its settlement grace's last millisecond:
// it expired at that millisecond (23:59:59.999), and a notice of money paid
// in it, which the pages showed the boleto taking, was refused. It now
// expires at the next day's 00:00:00.000, from which nothing paid settles
// it.
func TestBoletoNoticeInItsGracesLastMillisecond(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, lastMs := b.upfrontBoletoOnThursday(t)
		_, atExpiry := b.upfrontBoletoOnThursday(t)
		b.at(t, "2026-12-02 09:00") // the notice's day
		b.call("POST", "/external_api/v1/sandbox/payments/"+openPayment(t, lastMs)["id"].(string)+"/pay",
			map[string]any{"paid_at": "2026-12-01T23:59:59.999-03:00"}).want(t, 200)
		if got := b.bill(t, lastMs["id"].(string)); got["status"] != "paid" || got["paid_at"] != "2026-12-01T23:59:59.999-03:00" {
			t.Fatalf("paid in the grace's last millisecond: bill %v paid at %v", got["status"], got["paid_at"])
		}
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/sandbox/payments/"+openPayment(t, atExpiry)["id"].(string)+"/pay",
			map[string]any{"paid_at": "2026-12-02T00:00:00.000-03:00"}).want(t, 422)); got["paid_at"] == "" {
			t.Errorf("paid at the boleto's expiry: %v, want a refusal on paid_at", got)
		}
		if got := b.bill(t, atExpiry["id"].(string))["status"]; got != "pending" {
			t.Errorf("the bill paid at its boleto's expiry is %v", got)
		}
	})
}
