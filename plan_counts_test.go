package parcela

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// PlanCounts must give, for every number of installments, exactly the plan
// PlanCharge (or PlanCardCharge) gives for it, and refuse what they
// refuse: the offer page shows its numbers. Random offers, companies,
// days and times, month ends and 31 December among them.
func TestPlanCountsPlansAsEachCharge(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(18, 2026))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	days := []time.Time{
		time.Date(2026, 12, 31, 23, 30, 0, 0, SaoPaulo), time.Date(2026, 12, 31, 0, 5, 0, 0, SaoPaulo),
		time.Date(2027, 1, 31, 12, 0, 0, 0, SaoPaulo), time.Date(2028, 2, 29, 9, 0, 0, 0, SaoPaulo),
		time.Date(2027, 2, 28, 18, 0, 0, 0, SaoPaulo), time.Date(2026, 4, 30, 23, 59, 59, 0, SaoPaulo),
		time.Date(2026, 11, 24, 10, 0, 0, 0, SaoPaulo), time.Date(2026, 3, 1, 0, 0, 0, 0, SaoPaulo),
		time.Date(2026, 10, 15, 14, 0, 0, 0, SaoPaulo),
	}
	var planned, refused, overMax, undisclosed int
	for i := range 1500 {
		c := NewCompany("Escola", "11222333000181", "escola")
		c.MaxInstallments = []int{6, 12, 24}[rng.IntN(3)]
		c.MinInstallmentCents = []int64{0, 1000, 15000}[rng.IntN(3)]
		c.BoletoGraceBusinessDays = rng.IntN(3)
		dpType := DownPaymentPercentage
		dpValue := pick("0", "0.1", "0.2", "0.5", "0.9")
		if rng.IntN(4) == 0 {
			dpType, dpValue = DownPaymentAbsolute, pick("0", "100", "39900", "1000000")
		}
		pc := &PaymentConfiguration{ID: "financed", PaymentType: Financed, PaymentMethods: []string{MethodBoleto},
			AllowedDownPaymentMethods: []string{MethodPix, MethodBoleto, MethodCreditCard}, Availability: "enabled",
			ExpiresIn: []int{0, 24, 48, 72, 720}[rng.IntN(5)], MaxInstallments: 2 + rng.IntN(13), DownPaymentType: &dpType,
			DownPaymentValue: MustRate(dpValue), InterestRate: MustRate(pick("0", "0.0001", "0.0199", "0.0299", "0.1", "0.25")),
			RegistrationFee: MustRate(pick("0", "0", "0.05", "0.1", "0.3")), MinInstallmentCents: []int64{0, 1, 5000, 30000}[rng.IntN(4)]}
		amount := []int64{1000, 12345, 120000, 199000, 5_000_000, 99_999_999}[rng.IntN(6)]
		o := &Order{CustomerBirthdate: "1990-05-17", Offer: &Offer{ID: "offer", AmountCents: amount, Availability: "enabled",
			PaymentConfigurations: []*PaymentConfiguration{pc}}}
		now := days[rng.IntN(len(days))].Add(time.Duration(rng.IntN(3600)) * time.Second)
		method := pick(MethodPix, MethodBoleto, MethodCreditCard)
		req := chargeReq("financed", method, 0)
		day := []int{1, 10, 15, 28, 29, 30, 31}[rng.IntN(7)]
		req.DueDay = &day
		counts := []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
		switch i % 7 {
		case 0:
			counts = []int{0, 1, 12, 5, 25, 2} // out of range and out of order
		case 1:
			// Descending: the fewer installments, the higher a fee's CET,
			// so those past its maximum come after one planned.
			slices.Reverse(counts)
		}
		card := method == MethodCreditCard
		disclose := []int{0, 1, 2, 6, 12, 14, 25}[rng.IntN(7)]
		got := PlanCounts(req, o, &c, now, counts, card, disclose)
		disclosed := -1 // the plan for disclose installments, or else the last one planned
		for j := range counts {
			if got[j] != nil && (disclosed < 0 || counts[disclosed] != disclose) {
				disclosed = j
			}
		}
		for j, n := range counts {
			r := req
			r.Installments = &n
			var want *ChargePlan
			var err error
			if card {
				want, err = PlanCardCharge(r, o, &c, now)
			} else {
				want, err = PlanCharge(r, o, &c, now, "")
			}
			if err != nil {
				want = nil
				refused++
				if strings.Contains(err.Error(), "(CET) would exceed") {
					overMax++
				}
			} else {
				planned++
			}
			if j != disclosed && want != nil && got[j] != nil && got[j].Schedule.CETAnnualRate == nil {
				// Its cost is not disclosed: all else is the same.
				undisclosed++
				w := *want
				w.Schedule.TotalInterestCents, w.Schedule.CETAnnualRate = 0, nil
				want = &w
			}
			if !reflect.DeepEqual(got[j], want) {
				t.Fatalf("case %d (%s, %d installments, day %d, %v, config %+v, company max %d floor %d):\ngot  %+v\nwant %+v (%v)",
					i, method, n, day, now, *pc, c.MaxInstallments, c.MinInstallmentCents, got[j], want, err)
			}
		}
	}
	if planned < 1000 || refused < 1000 || overMax < 50 || undisclosed < 1000 {
		t.Fatalf("%d planned, %d refused (%d over the CET's maximum), %d without their cost: the cases do not cover them all",
			planned, refused, overMax, undisclosed)
	}
}

// Counts whose CET is past its maximum are refused by PlanCounts as by
// PlanCharge when they come after one planned (only one plan's CET is
// found; the others' are bounded): a fee of 45% on half the price financed
// passes it at the fewest installments. The disclosed plan's cost is
// PlanCharge's.
func TestPlanCountsRefusesCountsPastTheCETMaximum(t *testing.T) {
	t.Parallel()
	c, o := financedOrder(24, 100000, "0.5", "0.45")
	now := time.Date(2026, 12, 31, 23, 30, 0, 0, SaoPaulo)
	counts := []int{13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2}
	for _, disclose := range []int{13, 5, 3, 0} {
		got := PlanCounts(chargeReq("financed", MethodBoleto, 0), o, &c, now, counts, false, disclose)
		wants, errs := make([]*ChargePlan, len(counts)), make([]error, len(counts))
		disclosedAt := -1 // disclose if planned, else the last count planned
		for j, n := range counts {
			r := chargeReq("financed", MethodBoleto, 0)
			r.Installments = &n
			wants[j], errs[j] = PlanCharge(r, o, &c, now, "")
			if errs[j] == nil && (disclosedAt < 0 || disclosedAt != disclose) {
				disclosedAt = n
			}
		}
		overMax := 0
		for j, n := range counts {
			want, err := wants[j], errs[j]
			if err != nil {
				if got[j] != nil {
					t.Fatalf("%d installments: planned, PlanCharge refuses (%v)", n, err)
				}
				if strings.Contains(err.Error(), "(CET) would exceed") {
					overMax++
				}
				continue
			}
			if got[j] == nil {
				t.Fatalf("%d installments: refused, PlanCharge plans it", n)
			}
			if n != disclosedAt {
				w := *want
				w.Schedule.TotalInterestCents, w.Schedule.CETAnnualRate = 0, nil
				want = &w
			}
			if !reflect.DeepEqual(got[j], want) {
				t.Fatalf("%d installments (disclosing %d):\ngot  %+v\nwant %+v", n, disclose, got[j], want)
			}
		}
		if overMax < 2 || overMax > 8 {
			t.Fatalf("%d counts past the CET's maximum, want the fewest few", overMax)
		}
	}
}

// financedOrder is an order of an offer of amount cents financed in up to
// max installments (the company's limit too) by boleto, at 2.99% a month,
// with a down payment and a registration fee of those fractions of it.
func financedOrder(max int, amount int64, down, fee string) (Company, *Order) {
	c := NewCompany("Escola", "11222333000181", "escola")
	c.MaxInstallments = max
	dp := DownPaymentPercentage
	pc := &PaymentConfiguration{ID: "financed", PaymentType: Financed, PaymentMethods: []string{MethodBoleto},
		AllowedDownPaymentMethods: []string{MethodPix, MethodBoleto}, Availability: "enabled", MaxInstallments: max,
		DownPaymentType: &dp, DownPaymentValue: MustRate(down), InterestRate: MustRate("0.0299"), RegistrationFee: MustRate(fee)}
	return c, &Order{CustomerBirthdate: "1990-05-17", Offer: &Offer{ID: "offer", AmountCents: amount, Availability: "enabled",
		PaymentConfigurations: []*PaymentConfiguration{pc}}}
}
