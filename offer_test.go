package parcela

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// offerRequest decodes an offer body whose financed configuration (the
// second) has each given field replaced; a nil value removes it. Keys
// prefixed "offer." change the offer itself, "upfront." the first
// configuration.
func offerRequest(t testing.TB, changes map[string]any) OfferRequest {
	t.Helper()
	offer := map[string]any{"name": "Turma de janeiro", "product_id": "6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10", "amount_cents": 120000, "seats": 30}
	upfront := map[string]any{"payment_type": "upfront", "payment_methods": []string{"pix", "boleto"}, "expires_in_hours": 48}
	financed := map[string]any{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": []string{"boleto"},
		"allowed_down_payment_methods": []string{"pix", "boleto"}, "down_payment_type": "percentage",
		"down_payment_value": json.Number("0.2"), "interest_rate": json.Number("0.0299"), "max_installments": 12,
		"registration_fee": json.Number("0.05"), "expires_in_hours": 72}
	for k, v := range changes {
		m, key := financed, k
		switch {
		case strings.HasPrefix(k, "offer."):
			m, key = offer, k[6:]
		case strings.HasPrefix(k, "upfront."):
			m, key = upfront, k[8:]
		}
		if v == nil {
			delete(m, key)
		} else {
			m[key] = v
		}
	}
	body, err := json.Marshal(map[string]any{"offer": offer, "payment_configurations": []any{upfront, financed}})
	if err != nil {
		t.Fatal(err)
	}
	// The numbers go in as written, exponents and all.
	for _, raw := range []string{"1e-61", "1e10000", "0.0000001"} {
		body = []byte(strings.ReplaceAll(string(body), `"`+raw+`"`, raw))
	}
	var req OfferRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return req
}

func testProduct() *Product {
	return &Product{ID: "6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10", FullAmountCents: MaxAmountCents, Availability: "enabled"}
}

func TestBuildOffer(t *testing.T) {
	t.Parallel()
	now := calSP(2026, time.March, 5, 10, 0, 0, 0)
	tests := []struct {
		name    string
		changes map[string]any
		field   string // the first field at fault, "" when valid
		code    string
	}{
		{"valid", nil, "", ""},
		{"amount at what a boleto carries", map[string]any{"offer.amount_cents": MaxAmountCents, "registration_fee": json.Number("0"), "upfront.expires_in_hours": 1}, "", ""},
		{"amount above what a boleto carries", map[string]any{"offer.amount_cents": MaxAmountCents + 1}, "offer.amount_cents", "too_large"},
		{"upfront bill above what a boleto carries", map[string]any{"offer.amount_cents": MaxAmountCents, "registration_fee": json.Number("0"),
			"upfront.registration_fee": json.Number("0.01")},
			"payment_configurations[0].registration_fee", "too_large"},
		{"name with NUL", map[string]any{"offer.name": "Turma\x00"}, "offer.name", "invalid"},
		{"expiry at an offset of +24:00", map[string]any{"offer.expires_at": "2026-03-10T00:00:00+24:00"}, "offer.expires_at", "invalid"},
		{"expiry at an offset of +23:60", map[string]any{"offer.expires_at": "2026-03-10T00:00:00+23:60"}, "offer.expires_at", "invalid"},
		{"expiry at an offset of +23:59", map[string]any{"offer.expires_at": "2026-03-10T00:00:00+23:59"}, "", ""},
		{"interest 1e-61", map[string]any{"interest_rate": "1e-61"}, "payment_configurations[1].interest_rate", "invalid"},
		{"interest 1e10000", map[string]any{"interest_rate": "1e10000"}, "payment_configurations[1].interest_rate", "invalid"},
		{"interest with 7 places", map[string]any{"interest_rate": "0.0000001"}, "payment_configurations[1].interest_rate", "invalid"},
		{"fee 1e10000", map[string]any{"registration_fee": "1e10000"}, "payment_configurations[1].registration_fee", "invalid"},
		{"down payment 1e-61", map[string]any{"down_payment_value": "1e-61"}, "payment_configurations[1].down_payment_value", "invalid"},
		{"absolute down payment 1e10000", map[string]any{"down_payment_type": "absolute", "down_payment_value": "1e10000"},
			"payment_configurations[1].down_payment_value", "too_large"},
		{"a take rate type from the seller", map[string]any{"take_rate_type": "absolute"}, "payment_configurations[1].take_rate_type", "not_allowed"},
		{"a take rate from the seller", map[string]any{"take_rate_value": json.Number("0")}, "payment_configurations[1].take_rate_value", "not_allowed"},
		{"a higher floor than the company's", map[string]any{"min_installment_amount_cents": 6000}, "", ""},
		{"a lower floor than the company's", map[string]any{"min_installment_amount_cents": 4999},
			"payment_configurations[1].min_installment_amount_cents", "too_small"},
		// 96000 financed at 2.99% a month: 11 installments of about 10250
		// cents, 10 of about 11120, so an 11000-cent floor allows 11 bills.
		{"installments below the floor", map[string]any{"min_installment_amount_cents": 11000},
			"payment_configurations[1].max_installments", "too_large"},
		{"floor reachable by the allowed installments", map[string]any{"min_installment_amount_cents": 11000, "max_installments": 11}, "", ""},
		{"no plan reaches the floor", map[string]any{"min_installment_amount_cents": 200000},
			"payment_configurations[1].max_installments", "too_large"},
		// At what a boleto carries, 10% down at 4.99% a month leaves a
		// single installment of about 10.07 billion cents: fewer
		// installments cannot help, only a larger down payment.
		{"a 2-installment plan above what a boleto carries", map[string]any{"offer.amount_cents": MaxAmountCents, "down_payment_value": json.Number("0.1"),
			"interest_rate": json.Number("0.0499"), "registration_fee": json.Number("0"), "max_installments": 24},
			"payment_configurations[1].down_payment_value", "too_small"},
		{"the same with a larger down payment", map[string]any{"offer.amount_cents": MaxAmountCents, "down_payment_value": json.Number("0.2"),
			"interest_rate": json.Number("0.0499"), "registration_fee": json.Number("0"), "max_installments": 24}, "", ""},
		{"a 0-cent first bill", map[string]any{"down_payment_type": "absolute", "down_payment_value": json.Number("0"), "registration_fee": json.Number("0")},
			"payment_configurations[1].down_payment_value", "too_small"},
		{"no down payment but a fee", map[string]any{"down_payment_type": "absolute", "down_payment_value": json.Number("0")}, "", ""},
		// 99% down leaves 1200 cents financed, and a fee of 100% of the price,
		// 120000 cents, paid now for them: no rate repays that.
		{"a fee that dwarfs the credit", map[string]any{"down_payment_value": json.Number("0.99"), "registration_fee": json.Number("1"),
			"max_installments": 2, "min_installment_amount_cents": 5000},
			"payment_configurations[1].max_installments", "too_large"},
	}
	for _, tt := range tests {
		c := NewCompany("Escola X", "11222333000181", "escola-x")
		c.MinDownPaymentRate = MustRate("0")
		c.MaxInterestRate = MustRate("1")
		o, err := BuildOffer(offerRequest(t, tt.changes), &c, testProduct(), now)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Code != EINVALID || e.Fields[0].Field != tt.field || e.Fields[0].Code != tt.code {
			t.Errorf("%s: err = %v (%v), want %s on %s", tt.name, err, o, tt.code, tt.field)
		}
		if ok && len(e.Message) > 500 {
			t.Errorf("%s: a message of %d bytes", tt.name, len(e.Message))
		}
	}
}

// Past the 100 field errors a problem lists, a configuration's own errors
// are only counted: its plans were checked as if it were valid, and a
// financed one without a down_payment_type panicked there (a 500).
func TestBuildOfferPastTheListedFieldErrors(t *testing.T) {
	t.Parallel()
	bad := map[string]any{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": []string{"cheque", "cash"},
		"allowed_down_payment_methods": []string{"cheque", "cash"}, "interest_rate": 2, "down_payment_value": 3,
		"registration_fee": 5, "max_installments": 99, "expires_in_hours": 9999, "max_down_payment_installments": 99,
		"availability": "sometimes", "take_rate_value": 0, "min_installment_amount_cents": 1}
	configurations := make([]any, 10)
	for i := range configurations {
		configurations[i] = bad
	}
	body, err := json.Marshal(map[string]any{"offer": map[string]any{"name": "Turma de janeiro",
		"product_id": testProduct().ID, "amount_cents": 120000}, "payment_configurations": configurations})
	if err != nil {
		t.Fatal(err)
	}
	var req OfferRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	c := NewCompany("Escola X", "11222333000181", "escola-x")
	_, err = BuildOffer(req, &c, testProduct(), calSP(2026, time.March, 5, 10, 0, 0, 0))
	e, ok := err.(*Error)
	if !ok || e.Code != EINVALID || len(e.Fields) != MaxFieldErrors || !strings.Contains(e.Message, "more are not") {
		t.Fatalf("err = %v, want %d listed field errors and more counted", err, MaxFieldErrors)
	}
}

func TestBuildOfferPlansItChecksAreChargeable(t *testing.T) {
	t.Parallel()
	// Whatever an accepted configuration allows, a charge on any day of the
	// year, with any due day and number of installments, is not refused for
	// its amounts.
	c := NewCompany("Escola X", "11222333000181", "escola-x")
	req := offerRequest(t, map[string]any{"min_installment_amount_cents": 11000, "max_installments": 11})
	o, err := BuildOffer(req, &c, testProduct(), calSP(2026, time.January, 1, 0, 0, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	pc := o.PaymentConfigurations[1]
	for day := calSP(2026, time.January, 1, 10, 0, 0, 0); day.Year() == 2026; day = day.AddDate(0, 0, 5) {
		for n := 2; n <= pc.MaxInstallments; n++ {
			for _, dueDay := range []int{1, 15, 28, 31} {
				s, err := BuildSchedule(ScheduleInput{AmountCents: o.AmountCents, DownPaymentType: *pc.DownPaymentType, DownPaymentValue: pc.DownPaymentValue,
					RegistrationFee: pc.RegistrationFee, InterestRate: pc.InterestRate, Installments: n, DueDay: dueDay, ChargedAt: day,
					ExpiresIn: time.Duration(pc.ExpiresIn) * time.Hour})
				if err != nil {
					t.Fatalf("%v, %d installments, due day %d: %v", day, n, dueDay, err)
				}
				for _, b := range s.Bills[1:] {
					if b.AmountCents < pc.MinInstallmentCents {
						t.Fatalf("%v, %d installments, due day %d: a bill of %d cents", day, n, dueDay, b.AmountCents)
					}
				}
			}
		}
	}
}

func TestOfferUpdate(t *testing.T) {
	t.Parallel()
	now := calSP(2026, time.March, 5, 10, 0, 0, 0)
	str := func(s string) *string { return &s }
	n := func(i int) *int { return &i }
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	amount := int64(1000)
	tests := []struct {
		name  string
		f     OfferFields
		field string
	}{
		{"rename", OfferFields{Name: str("Turma de março")}, ""},
		{"empty name", OfferFields{Name: str("  ")}, "offer.name"},
		{"name with NUL", OfferFields{Name: str("Turma\x00")}, "offer.name"},
		{"name with a line break", OfferFields{Name: str("Turma\nde março")}, "offer.name"},
		{"disable", OfferFields{Availability: str("disabled")}, ""},
		{"unknown availability", OfferFields{Availability: str("paused")}, "offer.availability"},
		{"expire in the future", OfferFields{ExpiresAt: &future}, ""},
		{"expire in the past", OfferFields{ExpiresAt: &past}, "offer.expires_at"},
		{"seats above those taken", OfferFields{Seats: n(10)}, ""},
		{"seats below those taken", OfferFields{Seats: n(2)}, "offer.seats"},
		{"no seats", OfferFields{Seats: n(0)}, "offer.seats"},
		{"amount", OfferFields{AmountCents: &amount}, "offer.amount_cents"},
		{"product", OfferFields{ProductID: str("6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10")}, "offer.product_id"},
	}
	for _, tt := range tests {
		o := &Offer{Name: "Turma", Availability: "enabled", SeatsTaken: 3}
		err := o.Update(tt.f, now)
		switch e, _ := err.(*Error); {
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.field != "" && (e == nil || e.Fields[0].Field != tt.field):
			t.Errorf("%s: err = %v, want one on %s", tt.name, err, tt.field)
		}
	}
}

// An error on max_installments the request did not send says so: it took
// the company's maximum, and read as if the client had written it.
func TestDefaultedMaxInstallmentsSaysItWasNotSent(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola X", "11222333000181", "escola-x")
	c.MinDownPaymentRate, c.MaxInterestRate = MustRate("0"), MustRate("1")
	for _, sent := range []bool{false, true} {
		changes := map[string]any{"min_installment_amount_cents": 11000, "max_installments": nil}
		if sent {
			changes["max_installments"] = 12
		}
		_, err := BuildOffer(offerRequest(t, changes), &c, testProduct(), calSP(2026, time.March, 5, 10, 0, 0, 0))
		var e *Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "payment_configurations[1].max_installments" {
			t.Fatalf("sent %v: %v", sent, err)
		}
		said := strings.Contains(e.Fields[0].Message, fmt.Sprintf("not sent, it is the company's maximum of %d", c.MaxInstallments))
		if said != !sent {
			t.Errorf("sent %v: %q", sent, e.Fields[0].Message)
		}
	}
}
