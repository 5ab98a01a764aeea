package parcela

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// billingOf stores a schedule as a billing created at the charge.
func billingOf(s Schedule, chargedAt time.Time) *Billing {
	b := &Billing{AmountCents: s.TotalCents, CreatedAt: chargedAt, PaymentConfiguration: &PaymentConfiguration{}}
	for _, sb := range s.Bills {
		b.Bills = append(b.Bills, &Bill{Number: sb.Number, Type: sb.Type, AmountCents: sb.AmountCents, DueDate: sb.DueDate, Details: sb.Details})
	}
	return b
}

func TestBillingDisclosesTheScheduleCost(t *testing.T) {
	t.Parallel()
	charged := calSP(2026, time.March, 5, 10, 0, 0, 0)
	s, err := BuildSchedule(ScheduleInput{AmountCents: 100000, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.2"),
		RegistrationFee: MustRate("0.05"), InterestRate: MustRate("0.0299"), Installments: 4, DueDay: 10, ChargedAt: charged, ExpiresIn: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// Stored, reread in any order, timestamps cut to milliseconds.
	b := billingOf(s, charged.Add(999*time.Microsecond).Truncate(time.Millisecond))
	b.Bills[0], b.Bills[3] = b.Bills[3], b.Bills[0]
	got := b.Cost()
	if got.TotalPayableCents != s.TotalCents || got.TotalInterestCents != s.TotalInterestCents || got.CETAnnualRate == nil || !got.CETAnnualRate.Equal(*s.CETAnnualRate) {
		t.Errorf("billing cost %+v (CET %v), want the schedule's %d, %d, %v", got, got.CETAnnualRate, s.TotalCents, s.TotalInterestCents, s.CETAnnualRate)
	}

	body, err := json.Marshal(NewBillingOrderForm(b, Links{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"total_payable_cents":110333`, `"total_interest_cents":5333`, `"cet_annual_rate":1.044878`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("billing form %s lacks %s", body, want)
		}
	}

	// A billing that carries its disclosure shows it, without deriving it
	// again; the summary inside its bills never does (the contract's
	// BillingSummary has no cost disclosure: read it on the billing).
	b.Disclosed = &Cost{TotalPayableCents: 1, TotalInterestCents: 2, CETAnnualRate: new(MustRate("0.5"))}
	if got := b.Cost(); got.TotalPayableCents != 1 || got.TotalInterestCents != 2 || !got.CETAnnualRate.Equal(MustRate("0.5")) {
		t.Errorf("Cost() = %+v, want the disclosed one", got)
	}
	bill := b.Bills[1]
	bill.Billing = b
	body, _ = json.Marshal(NewBillEndpointForm(bill, &Company{}, charged, Links{}))
	if strings.Contains(string(body), "cet_annual_rate") || strings.Contains(string(body), "total_payable_cents") {
		t.Errorf("bill form %s shows a cost disclosure in its billing summary", body)
	}
	if d := s.Cost(); d.TotalPayableCents != 110333 || d.TotalInterestCents != 5333 || !d.CETAnnualRate.Equal(MustRate("1.044878")) {
		t.Errorf("Schedule.Cost() = %+v", d)
	}

	up, err := BuildSchedule(ScheduleInput{AmountCents: 100000, Upfront: true, RegistrationFee: MustRate("0.05"), Installments: 1, ChargedAt: charged, ExpiresIn: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = json.Marshal(NewBillingOrderForm(billingOf(up, charged), Links{}))
	for _, want := range []string{`"total_payable_cents":105000`, `"total_interest_cents":0`, `"cet_annual_rate":0`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("upfront billing form %s lacks %s", body, want)
		}
	}
}

func TestCostOfRefusesACostBeyondTheMaximum(t *testing.T) {
	t.Parallel()
	charged := calSP(2026, time.March, 5, 10, 0, 0, 0)
	bill := func(n int, amount, down, fee, amort, interest int64, due time.Time) ScheduledBill {
		return ScheduledBill{Number: n, AmountCents: amount, DueDate: due,
			Details: BillDetails{DownPaymentCents: down, RegistrationFeeCents: fee, AmortizationCents: amort, InterestCents: interest}}
	}
	tests := []struct {
		name  string
		bills []ScheduledBill
		cet   string // "" when refused
	}{
		// 10000 lent for exactly 365 days at 10% a year, no fee.
		{"a year at 10%", []ScheduledBill{bill(0, 5000, 5000, 0, 0, 0, charged), bill(1, 11000, 0, 0, 10000, 1000, charged.AddDate(1, 0, 0))}, "0.1"},
		// Repaid on the day it is lent: no time, no cost.
		{"nothing lent for any time", []ScheduledBill{bill(0, 5000, 5000, 0, 0, 0, charged), bill(1, 10000, 0, 0, 10000, 0, charged)}, "0"},
		// A fee of the whole credit, paid at once: nothing is left lent.
		{"a fee of the whole credit", []ScheduledBill{bill(0, 15000, 5000, 10000, 0, 0, charged), bill(1, 10000, 0, 0, 10000, 0, charged.AddDate(0, 1, 0))}, ""},
		// 10000 lent, 20000 back in 30 days: (2^(365/30)) − 1 = 4596.604550, within.
		{"doubling in a month", []ScheduledBill{bill(0, 5000, 5000, 0, 0, 0, charged), bill(1, 20000, 0, 0, 10000, 10000, charged.AddDate(0, 0, 30))}, "4596.60455"},
		// 10000 lent, 100000 back in 30 days: 10^(365/30) − 1, beyond.
		{"ten times in a month", []ScheduledBill{bill(0, 5000, 5000, 0, 0, 0, charged), bill(1, 100000, 0, 0, 10000, 90000, charged.AddDate(0, 0, 30))}, ""},
		// A fee of 58.6535% of the credit paid at once, the rest repaid in
		// 28 days: just within the maximum.
		{"just within the maximum", []ScheduledBill{bill(0, 586_535_000, 0, 586_535_000, 0, 0, charged), bill(1, 1_000_000_000, 0, 0, 1_000_000_000, 0, charged.AddDate(0, 0, 28))}, "99997.811215"},
		// 58.6536%: 100000.964028, above it, though below the rounded-up
		// daily rate the search starts from.
		{"just beyond the maximum", []ScheduledBill{bill(0, 586_536_000, 0, 586_536_000, 0, 0, charged), bill(1, 1_000_000_000, 0, 0, 1_000_000_000, 0, charged.AddDate(0, 0, 28))}, ""},
	}
	for _, tt := range tests {
		c, err := CostOf(charged, tt.bills)
		switch {
		case tt.cet == "" && ErrorCode(err) != EINVALID:
			t.Errorf("%s: CET %v, err %v; want a refusal", tt.name, c.CETAnnualRate, err)
		case tt.cet != "" && (err != nil || c.CETAnnualRate == nil || !c.CETAnnualRate.Equal(MustRate(tt.cet))):
			t.Errorf("%s: CET %v, err %v; want %s", tt.name, c.CETAnnualRate, err, tt.cet)
		}
	}
}

// A just-charged billing answers its plan's cost, the figures its bills
// give when read back.
func TestChargedBillingCostIsThePlans(t *testing.T) {
	t.Parallel()
	charged := calSP(2026, time.March, 5, 10, 0, 0, 0)
	s, err := BuildSchedule(ScheduleInput{AmountCents: 120000, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.2"),
		RegistrationFee: MustRate("0.05"), InterestRate: MustRate("0.0299"), Installments: 11, DueDay: 10, ChargedAt: charged, ExpiresIn: 72 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	b := newBilling(Auth{}, &Order{}, &ChargePlan{Configuration: &PaymentConfiguration{}, Method: MethodBoleto, Schedule: s}, charged)
	planned := b.Cost()
	b.planned = nil
	derived := b.Cost()
	if planned.TotalPayableCents != derived.TotalPayableCents || planned.TotalInterestCents != derived.TotalInterestCents ||
		planned.CETAnnualRate == nil || derived.CETAnnualRate == nil || !planned.CETAnnualRate.Equal(*derived.CETAnnualRate) {
		t.Errorf("planned cost %+v (CET %v), derived %+v (CET %v)", planned, planned.CETAnnualRate, derived, derived.CETAnnualRate)
	}
}

// The remembered CET is the one solved for: the same credit gives the same
// answer, in any order of its flows, and a refused one stays refused.
func TestRememberedCETIsTheSolvedOne(t *testing.T) {
	t.Parallel()
	flows := func() []cashFlow {
		return []cashFlow{{days: 95, cents: 27000}, {days: 5, cents: 5000}, {days: 36, cents: 27000}, {days: 64, cents: 27000}}
	}
	x, ok := solveDailyRate(80000, flows())
	if !ok {
		t.Fatal("no rate")
	}
	want := RateFromDecimal(powTruncated(one.Add(x), 365).Sub(one).Round(CETPlaces))
	for range 2 {
		f := flows()
		f[0], f[3] = f[3], f[0]
		if got, ok := cetOf(80000, f); !ok || !got.Equal(want) {
			t.Errorf("cetOf = %v %v, want %v", got, ok, want)
		}
	}
	for range 2 {
		if _, ok := cetOf(80000, []cashFlow{{days: 30, cents: 79000}}); ok {
			t.Error("a credit repaid with less than its principal has a CET")
		}
	}
}
