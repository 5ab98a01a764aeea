package server_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/brcode"
	"parcela/sqldb/sqldbtest"
)

func chargeBody(configID, method string, installments int) map[string]any {
	return map[string]any{
		"payment_configuration_id": configID, "due_day": 10, "installments": installments,
		"payment":   map[string]any{"payment_method": method},
		"signature": map[string]any{"remote_ip": "203.0.113.7", "user_agent": "Mozilla/5.0 (X11; Linux x86_64)"},
	}
}

// configs returns the offer's upfront and financed configuration ids.
func configs(offer map[string]any) (upfront, financed string) {
	for _, pc := range offer["payment_configurations"].([]any) {
		m := pc.(map[string]any)
		if m["payment_type"] == "upfront" {
			upfront = m["id"].(string)
		} else {
			financed = m["id"].(string)
		}
	}
	return
}

func TestChargeVariations(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			for _, v := range []struct {
				name         string
				financed     bool
				method       string
				installments int
			}{
				{"financed_boleto_down_payment", true, "boleto", 4},
				{"financed_pix_down_payment", true, "pix", 4},
				{"upfront_pix", false, "pix", 1},
				{"upfront_boleto", false, "boleto", 1},
			} {
				b := setup(t, e)
				offer, order := b.order()
				up, fin := configs(offer)
				cfg := up
				if v.financed {
					cfg = fin
				}
				id := order["id"].(string)
				r := b.call("POST", "/external_api/v1/orders/"+id+"/charge", chargeBody(cfg, v.method, v.installments)).want(t, 200)
				golden(t, "charge_"+v.name, r.Body, b.company.Name, b.company.Slug)
				got := b.call("GET", "/external_api/v1/orders/"+id, nil).want(t, 200)
				golden(t, "charge_"+v.name, got.Body, b.company.Name, b.company.Slug)
				checkCharged(t, r.JSON(t), v.method, v.installments)
			}
		})
	}
}

// checkCharged asserts the spec's observed result and that the codes are
// valid and carry the first bill's amount.
func checkCharged(t *testing.T, o map[string]any, method string, installments int) {
	t.Helper()
	if o["status"] != "in_progress" {
		t.Fatalf("order status %v", o["status"])
	}
	billings := o["billings"].([]any)
	if len(billings) != 1 {
		t.Fatalf("%d billings", len(billings))
	}
	billing := billings[0].(map[string]any)
	bills := billing["bills"].([]any)
	if billing["status"] != "waiting_payment" || len(bills) != installments || billing["installments"] != float64(installments) {
		t.Fatalf("billing %v with %d bills", billing["status"], len(bills))
	}
	var sum int64
	for i, x := range bills {
		bill := x.(map[string]any)
		sum += int64(bill["amount_cents"].(float64))
		d := bill["bill_details"].(map[string]any)
		parts := d["down_payment"].(float64) + d["registration_fee"].(float64) + d["amortization"].(float64) + d["interest"].(float64)
		if parts != bill["amount_cents"].(float64) || bill["status"] != "pending" {
			t.Fatalf("bill %d: details %v do not add to %v (status %v)", i, d, bill["amount_cents"], bill["status"])
		}
		payments := bill["payments"].([]any)
		if i == 0 {
			if bill["bill_type"] != "down_payment" || len(payments) != 1 {
				t.Fatalf("first bill %v with %d payments", bill["bill_type"], len(payments))
			}
			p := payments[0].(map[string]any)
			// A Pix charge expires when its bill is due; a boleto after its
			// last payable day and the default one business day of grace.
			expires := bill["due_date"].(string)
			if method == "boleto" {
				due, err := time.Parse(time.RFC3339, expires)
				if err != nil {
					t.Fatal(err)
				}
				expires = parcela.BoletoExpiry(due, 1).Format(parcela.TimestampLayout)
			}
			if p["status"] != "unpaid" || p["payment_method"] != method || p["amount_cents"] != bill["amount_cents"] || p["expires_at"] != expires {
				t.Fatalf("first payment %v, want it to expire at %s", p, expires)
			}
			checkCode(t, method, p["barcode"].(string), int64(bill["amount_cents"].(float64)))
			continue
		}
		if bill["bill_type"] != "installment" || len(payments) != 0 || !strings.HasSuffix(bill["due_date"].(string), "T23:59:59.999-03:00") {
			t.Fatalf("installment %d: %v, %d payments, due %v", i, bill["bill_type"], len(payments), bill["due_date"])
		}
		if !strings.Contains(bill["due_date"].(string), "-10T") {
			t.Fatalf("installment %d due %v, want day 10", i, bill["due_date"])
		}
	}
	if sum != int64(billing["amount_cents"].(float64)) {
		t.Fatalf("bills sum to %d, billing amount %v", sum, billing["amount_cents"])
	}
}

func checkCode(t *testing.T, method, code string, amount int64) {
	t.Helper()
	if method == "boleto" {
		if len(code) != 47 {
			t.Fatalf("linha digitável %q is not 47 digits", code)
		}
		bar, err := brcode.ParseLinhaDigitavel(code)
		if err != nil {
			t.Fatalf("linha digitável %s: %v", code, err)
		}
		if got := bar[9:19]; got != strings.Repeat("0", 10-len(itoa(amount)))+itoa(amount) {
			t.Fatalf("barcode amount %s, want %d", got, amount)
		}
		return
	}
	p, err := brcode.ParsePix(code)
	if err != nil {
		t.Fatalf("pix %s: %v", code, err)
	}
	if p.AmountCents != amount || !strings.HasPrefix(code, "000201") {
		t.Fatalf("pix amount %d, want %d", p.AmountCents, amount)
	}
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	for n >= 10 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	b[i] = byte('0' + n)
	return string(b[i:])
}

func TestChargeRules(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		up, fin := configs(offer)
		id := order["id"].(string)
		charge := func(body map[string]any) resp { return b.call("POST", "/external_api/v1/orders/"+id+"/charge", body) }

		r := charge(chargeBody(fin, "credit_card", 4)).want(t, 422)
		if p := r.JSON(t); p["code"] != "credit_card_not_supported" || !strings.Contains(p["detail"].(string), "checkout") {
			t.Fatalf("credit card: %v", p)
		}
		other := b.offer()
		_, otherFin := configs(other)
		cases := []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"configuration of another offer", chargeBody(otherFin, "boleto", 4), "payment_configuration_id"},
			{"installments above max", chargeBody(fin, "boleto", 13), "installments"},
			{"installments of 1 when financed", chargeBody(fin, "boleto", 1), "installments"},
			{"installments of 2 when upfront", chargeBody(up, "pix", 2), "installments"},
			{"unknown method", chargeBody(up, "cash", 1), "payment.payment_method"},
			{"due day 0", func() map[string]any { m := chargeBody(fin, "boleto", 4); m["due_day"] = 0; return m }(), "due_day"},
			{"due day 32", func() map[string]any { m := chargeBody(fin, "boleto", 4); m["due_day"] = 32; return m }(), "due_day"},
			{"bad remote ip", func() map[string]any {
				m := chargeBody(fin, "boleto", 4)
				m["signature"] = map[string]any{"remote_ip": "300.1.1.1", "user_agent": "x"}
				return m
			}(), "signature.remote_ip"},
			{"no signature", func() map[string]any { m := chargeBody(fin, "boleto", 4); delete(m, "signature"); return m }(), "signature"},
			{"no configuration", func() map[string]any {
				m := chargeBody(fin, "boleto", 4)
				delete(m, "payment_configuration_id")
				return m
			}(), "payment_configuration_id"},
		}
		for _, c := range cases {
			got := fieldCodes(t, charge(c.body))
			if c.field != "" && got[c.field] == "" {
				t.Errorf("%s: no error on %s: %v", c.name, c.field, got)
			}
			if c.field == "" && len(got) == 0 {
				t.Errorf("%s: no error", c.name)
			}
		}
		// An installment below the minimum: 10000 with 20% down over 11
		// installments is ~727 cents each, so the offer itself is refused
		// (a charge refuses it too, when the company raises its minimum
		// after the offer: see the domain's PlanCharge tests).
		lowMinOffer := func(maxInstallments int) map[string]any {
			return map[string]any{
				"offer": map[string]any{"name": "Barato", "product_id": offer["product"].(map[string]any)["id"], "amount_cents": 10000},
				"payment_configurations": []any{map[string]any{"payment_type": "financed", "allowed_down_payment_methods": []string{"pix"},
					"down_payment_type": "percentage", "down_payment_value": 0.2, "max_installments": maxInstallments}},
			}
		}
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/offers", lowMinOffer(12))); got["payment_configurations[0].max_installments"] != "too_large" {
			t.Errorf("installment below minimum: %v", got)
		}
		lowMin := b.call("POST", "/external_api/v1/offers", lowMinOffer(2)).want(t, 201).JSON(t)
		o2 := b.call("POST", "/external_api/v1/orders", orderBody(lowMin["id"].(string))).want(t, 201).JSON(t)
		_, fin2 := configs(lowMin)
		// Boleto down payment not allowed when only pix is.
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/orders/"+o2["id"].(string)+"/charge", chargeBody(fin2, "boleto", 2))); got["payment.payment_method"] != "not_allowed" {
			t.Errorf("down payment method: %v", got)
		}

		// Nothing above changed the order: it still charges, once.
		charge(chargeBody(fin, "boleto", 4)).want(t, 200)
		if r := charge(chargeBody(fin, "boleto", 4)).want(t, 409); r.JSON(t)["code"] != "invalid_state" {
			t.Fatalf("second charge %s", r.Body)
		}
		got := b.call("GET", "/external_api/v1/offers/"+offer["id"].(string), nil).want(t, 200).JSON(t)
		if got["seats_taken"] != float64(1) {
			t.Fatalf("seats_taken %v", got["seats_taken"])
		}
		b.send(b.sandbox.URL, b.otherToken, "POST", "/external_api/v1/orders/"+id+"/charge", chargeBody(fin, "boleto", 4), nil).want(t, 404)
	})
}

// A sold-out offer fails the charge (when read, or at its guarded seat
// count when it sold out meanwhile): nothing of the charge may remain.
func TestChargeIsAtomic(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		p := b.product()
		offer := b.call("POST", "/external_api/v1/offers", map[string]any{
			"offer":                  map[string]any{"name": "Um lugar", "product_id": p["id"], "amount_cents": 50000, "seats": 1},
			"payment_configurations": []any{map[string]any{"payment_type": "upfront", "payment_methods": []string{"pix"}}},
		}).want(t, 201).JSON(t)
		up, _ := configs(offer)
		o1 := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
		o2 := b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(t, 201).JSON(t)
		b.call("POST", "/external_api/v1/orders/"+o1["id"].(string)+"/charge", chargeBody(up, "pix", 1)).want(t, 200)
		if got := fieldCodes(t, b.call("POST", "/external_api/v1/orders/"+o2["id"].(string)+"/charge", chargeBody(up, "pix", 1))); got["offer"] == "" {
			t.Fatalf("sold out: %v", got)
		}
		after := b.call("GET", "/external_api/v1/orders/"+o2["id"].(string), nil).want(t, 200).JSON(t)
		if after["status"] != "pending" || len(after["billings"].([]any)) != 0 {
			t.Fatalf("a failed charge left %v with %d billings", after["status"], len(after["billings"].([]any)))
		}
		events, _ := b.db.Events(t.Context(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, o2["id"].(string))
		if len(events) != 0 {
			t.Fatalf("a failed charge wrote events: %+v", events)
		}
	})
}

func TestConcurrentCharges(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.skipContract = true
		for _, sameKey := range []bool{false, true} {
			offer, order := b.order()
			_, fin := configs(offer)
			id := order["id"].(string)
			key := "charge-" + sqldbtest.Suffix()
			var wg sync.WaitGroup
			statuses := make([]int, 50)
			bodies := make([]string, 50)
			for i := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h := map[string]string{}
					if sameKey {
						h["Idempotency-Key"] = key
					}
					r := b.send(b.sandbox.URL, b.token, "POST", "/external_api/v1/orders/"+id+"/charge", chargeBody(fin, "boleto", 4), h)
					statuses[i], bodies[i] = r.Status, string(r.Body)
				}()
			}
			wg.Wait()
			ok := 0
			for i, s := range statuses {
				switch {
				case s == 200:
					ok++
				case s == 409 && (strings.Contains(bodies[i], "invalid_state") || strings.Contains(bodies[i], "idempotency_in_flight")):
				default:
					t.Fatalf("sameKey=%v: status %d %s", sameKey, s, bodies[i])
				}
			}
			got := b.call("GET", "/external_api/v1/orders/"+id, nil).want(t, 200).JSON(t)
			if n := len(got["billings"].([]any)); n != 1 {
				t.Fatalf("sameKey=%v: %d billings", sameKey, n)
			}
			if !sameKey && ok != 1 {
				t.Fatalf("%d charges succeeded", ok)
			}
			if sameKey && ok < 1 {
				t.Fatalf("no charge succeeded")
			}
			events, _ := b.db.Events(t.Context(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, id)
			if len(events) != 1 || events[0].Event != "in_progress" {
				t.Fatalf("order events %+v", events)
			}
		}
	})
}

func TestPaymentImages(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for _, method := range []string{"boleto", "pix"} {
			offer, order := b.order()
			up, _ := configs(offer)
			o := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, method, 1)).want(t, 200).JSON(t)
			pay := o["billings"].([]any)[0].(map[string]any)["bills"].([]any)[0].(map[string]any)["payments"].([]any)[0].(map[string]any)
			r := b.send(b.sandbox.URL, "", "GET", "/external_api/v1/payments/"+pay["id"].(string)+"/barcode.png", nil, nil).want(t, 200)
			if r.Header.Get("Content-Type") != "image/png" || len(r.Body) < 100 || string(r.Body[1:4]) != "PNG" {
				t.Fatalf("%s image: %q %d bytes", method, r.Header.Get("Content-Type"), len(r.Body))
			}
			b.send(b.production.URL, "", "GET", "/external_api/v1/payments/"+pay["id"].(string)+"/barcode.png", nil, nil).want(t, 404)
		}
	})
}

// Offers without a seat limit keep no count while they sell (their charges
// never queue on the offer's row); given a limit later, they count the seats
// already sold, and the limit holds from there.
func TestSeatLimitAddedAfterSales(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, o1 := b.order()
		up, _ := configs(offer)
		id := offer["id"].(string)
		b.call("POST", "/external_api/v1/orders/"+o1["id"].(string)+"/charge", chargeBody(up, "pix", 1)).want(t, 200)
		o2 := b.call("POST", "/external_api/v1/orders", orderBody(id)).want(t, 201).JSON(t)
		b.call("POST", "/external_api/v1/orders/"+o2["id"].(string)+"/charge", chargeBody(up, "boleto", 1)).want(t, 200)
		o3 := b.call("POST", "/external_api/v1/orders", orderBody(id)).want(t, 201).JSON(t)

		patch := func(seats int) resp {
			return b.call("PATCH", "/external_api/v1/offers/"+id, map[string]any{"offer": map[string]any{"seats": seats}})
		}
		if got := fieldCodes(t, patch(1)); got["offer.seats"] != "too_small" {
			t.Fatalf("a limit below the 2 seats sold: %v", got)
		}
		patch(3).want(t, 200)
		b.call("POST", "/external_api/v1/orders/"+o3["id"].(string)+"/charge", chargeBody(up, "pix", 1)).want(t, 200)
		o4 := b.call("POST", "/external_api/v1/orders", orderBody(id))
		if o4.Status == 201 {
			if got := fieldCodes(t, b.call("POST", "/external_api/v1/orders/"+o4.JSON(t)["id"].(string)+"/charge", chargeBody(up, "pix", 1))); got["offer"] == "" {
				t.Fatalf("a fourth seat of three: %v", got)
			}
		} else if got := fieldCodes(t, o4); got["order.offer_id"] != "not_sellable" {
			t.Fatalf("an order for a sold-out offer: %v", got)
		}
	})
}
