package parcela

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestAcceptedOfferChargesEveryPlan: a financed configuration checkPlans
// accepts can be charged at every number of installments it allows, on
// every due day and any date: the worst case is checked at the offer.
func TestAcceptedOfferChargesEveryPlan(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 2027))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	days := []time.Time{
		time.Date(2026, 12, 31, 23, 30, 0, 0, SaoPaulo), time.Date(2027, 1, 31, 12, 0, 0, 0, SaoPaulo),
		time.Date(2028, 2, 29, 9, 0, 0, 0, SaoPaulo), time.Date(2027, 2, 28, 18, 0, 0, 0, SaoPaulo),
		time.Date(2027, 7, 31, 8, 0, 0, 0, SaoPaulo), time.Date(2027, 3, 30, 8, 0, 0, 0, SaoPaulo),
		time.Date(2027, 1, 29, 8, 0, 0, 0, SaoPaulo),
	}
	var accepted, charged int
	for range 1500 {
		c := NewCompany("Escola", "11222333000181", "escola")
		c.MaxInstallments = MaxInstallments
		c.MinInstallmentCents = []int64{0, 1, 5000}[rng.IntN(3)]
		dpType := DownPaymentPercentage
		dpValue := pick("0", "0.000001", "0.1", "0.5", "0.999999")
		amount := []int64{5000, 10001, 123_457, 99_999_999, 1_000_000_000, MaxAmountCents}[rng.IntN(6)]
		if rng.IntN(3) == 0 {
			dpType, dpValue = DownPaymentAbsolute, fmt.Sprint([]int64{0, 1, amount / 2, amount - 1}[rng.IntN(4)])
		}
		pc := &PaymentConfiguration{ID: "financed", PaymentType: Financed, PaymentMethods: []string{MethodBoleto},
			AllowedDownPaymentMethods: []string{MethodPix, MethodBoleto}, Availability: "enabled",
			ExpiresIn: []int{1, 24, 72, 720}[rng.IntN(4)], MaxInstallments: []int{2, 3, 12, 24, 60, 120}[rng.IntN(6)],
			DownPaymentType: &dpType, DownPaymentValue: MustRate(dpValue),
			InterestRate:        MustRate(pick("0", "0.000001", "0.0299", "0.1", "0.5", "0.999999", "1")),
			RegistrationFee:     MustRate(pick("0", "0.05", "0.35", "0.9", "1")),
			MinInstallmentCents: c.MinInstallmentCents + []int64{0, 0, 1, 30000}[rng.IntN(4)]}
		var v Validation
		checkPlans(&v, "", pc, amount)
		if len(v.Fields) > 0 {
			continue
		}
		accepted++
		for range 4 {
			now := days[rng.IntN(len(days))].Add(time.Duration(rng.IntN(3600)) * time.Second)
			day := 1 + rng.IntN(31)
			n := 2 + rng.IntN(pc.MaxInstallments-1)
			if _, err := financedPlan(&c, pc, amount, now, day, n); err != nil {
				t.Fatalf("%d cents at %s a month, down payment %s %s, floor %d, at most %d installments, expiring in %dh: accepted at the offer, and %d installments on day %d charged %s refused: %v",
					amount, pc.InterestRate, dpType, dpValue, pc.MinInstallmentCents, pc.MaxInstallments, pc.ExpiresIn, n, day, now, err)
			}
			charged++
		}
	}
	if accepted < 200 {
		t.Fatalf("only %d configurations accepted", accepted)
	}
}

// The smallest installment is not always at the shortest first period:
// the last installment settles the rounding of every PMT, and that
// residue moves with the days to installment 1. This offer's smallest
// 86-bill installment is 10,870 cents at 28 days and 10,826 at 29, below
// its floor of 10,850: a payer charged 29 days before installment 1 is
// refused that plan, so the offer must not allow it.
func TestOfferFloorHoldsAtEveryFirstPeriod(t *testing.T) {
	t.Parallel()
	dpType := DownPaymentAbsolute
	pc := &PaymentConfiguration{ID: "financed", PaymentType: Financed, PaymentMethods: []string{MethodBoleto},
		AllowedDownPaymentMethods: []string{MethodPix, MethodBoleto}, Availability: "enabled", ExpiresIn: 1,
		MaxInstallments: 86, DownPaymentType: &dpType, DownPaymentValue: MustRate("1"),
		InterestRate: MustRate("0.0099"), RegistrationFee: MustRate("0"), MinInstallmentCents: 10850}
	const amount = 623134
	c := NewCompany("Escola", "11222333000181", "escola")
	c.MaxInstallments, c.MinInstallmentCents = MaxInstallments, 5000
	o := &Order{CustomerBirthdate: "1990-05-17", Offer: &Offer{ID: "offer", AmountCents: amount, Availability: "enabled",
		PaymentConfigurations: []*PaymentConfiguration{pc}}}
	req := chargeReq("financed", MethodBoleto, 86)
	day := 2 // down payment on 1 February, installment 1 on 2 March: 29 days
	req.DueDay = &day
	if _, err := PlanCharge(req, o, &c, time.Date(2027, 2, 1, 10, 0, 0, 0, SaoPaulo), ""); err == nil {
		t.Fatal("the 86-installment plan charged 29 days before installment 1 was not refused; the case no longer shows the residue")
	}
	var v Validation
	checkPlans(&v, "", pc, amount)
	if len(v.Fields) != 1 || v.Fields[0].Field != "max_installments" || !strings.Contains(v.Fields[0].Message, "at most 85 installments") {
		t.Fatalf("the offer's check gave %+v, want max_installments refused with at most 85 installments", v.Fields)
	}
}

// An offer whose 2-bill plan costs just over MaxCETAnnualRate (a fee of
// 58.6536% of the credit, the rest repaid in 28 days: 100000.964028) is
// refused on its fee, as one just under it (58.6535%) is not.
func TestOfferRefusesACETJustBeyondTheMaximum(t *testing.T) {
	t.Parallel()
	for fee, refused := range map[string]bool{"0.586535": false, "0.586536": true} {
		dpType := DownPaymentPercentage
		pc := &PaymentConfiguration{PaymentType: Financed, ExpiresIn: 1, MaxInstallments: 2, DownPaymentType: &dpType,
			DownPaymentValue: MustRate("0"), InterestRate: MustRate("0"), RegistrationFee: MustRate(fee), MinInstallmentCents: 5000}
		var v Validation
		checkPlans(&v, "", pc, 1_000_000_000)
		onFee := len(v.Fields) == 1 && v.Fields[0].Field == "registration_fee"
		if (refused && !onFee) || (!refused && len(v.Fields) > 0) {
			t.Errorf("fee %s: %+v, want refused %v on registration_fee", fee, v.Fields, refused)
		}
	}
}

// A down payment payable for 30 days (720 hours) falls due 30 days after
// the charge, so installment 1 at least 58: an offer whose single
// installment is below its floor only at a first period no plan can have
// (104,657 cents at 28 days, 109,888 at 58, floor 105,000) is accepted,
// and every charge of it in a year, on every due day, is too.
func TestOfferFloorIsCheckedAtPeriodsAPlanCanHave(t *testing.T) {
	t.Parallel()
	dpType := DownPaymentAbsolute
	pc := &PaymentConfiguration{ID: "financed", PaymentType: Financed, PaymentMethods: []string{MethodBoleto},
		AllowedDownPaymentMethods: []string{MethodPix, MethodBoleto}, Availability: "enabled", ExpiresIn: 720,
		MaxInstallments: 2, DownPaymentType: &dpType, DownPaymentValue: MustRate("100000"),
		InterestRate: MustRate("0.05"), RegistrationFee: MustRate("0"), MinInstallmentCents: 105_000}
	const amount = 200_000
	var v Validation
	checkPlans(&v, "", pc, amount)
	if len(v.Fields) > 0 {
		t.Fatalf("refused: %+v", v.Fields)
	}
	c := NewCompany("Escola", "11222333000181", "escola")
	c.MaxInstallments = MaxInstallments
	o := &Order{CustomerBirthdate: "1990-05-17", Offer: &Offer{ID: "offer", AmountCents: amount, Availability: "enabled",
		PaymentConfigurations: []*PaymentConfiguration{pc}}}
	for at := time.Date(2027, 1, 1, 0, 0, 0, 0, SaoPaulo); at.Year() == 2027; at = at.Add(7 * time.Hour) {
		for day := 1; day <= 31; day++ {
			req := chargeReq("financed", MethodBoleto, 2)
			req.DueDay = &day
			if _, err := PlanCharge(req, o, &c, at, ""); err != nil {
				t.Fatalf("charged %s on day %d: %v", at, day, err)
			}
		}
	}
}

// An offer whose longest plans would end with a last installment off level
// (the rounding of each installment to the cent grown by (1+i) a month: at
// 10% a month over 119 installments of R$ 9.261,16, a last one of
// R$ 13.085,29) is capped below them, with that reason, and every plan it
// then allows is charged level; one cent more on the price no longer turns
// the same offer into a refusal for a principal "too small".
func TestOfferCapsPlansThatWouldEndUneven(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	c.MaxInstallments = 120
	for _, tc := range []struct {
		rate   string
		amount int64
	}{{"0.10", 100_000_03}, {"0.08", 100_000_00}, {"0.15", 100_000_00}, {"0.15", 100_000_03}} {
		dpType := DownPaymentPercentage
		pc := &PaymentConfiguration{ID: "financed", PaymentType: Financed, InterestRate: MustRate(tc.rate), RegistrationFee: MustRate("0"),
			DownPaymentType: &dpType, DownPaymentValue: MustRate("0.1"), MaxInstallments: 120, MinInstallmentCents: 500, ExpiresIn: 72,
			AllowedDownPaymentMethods: []string{MethodBoleto}, PaymentMethods: []string{MethodBoleto}, Availability: "enabled"}
		var v Validation
		checkPlans(&v, "", pc, tc.amount)
		if len(v.Fields) != 1 || v.Fields[0].Field != "max_installments" || !strings.Contains(v.Fields[0].Message, "not level") {
			t.Fatalf("%s a month, %d cents: %+v, want max_installments refused as not level", tc.rate, tc.amount, v.Fields)
		}
		allowed := cappedAt(t, v.Fields[0].Message)
		if allowed < 2 {
			t.Fatalf("%s a month: %q allows no plan", tc.rate, v.Fields[0].Message)
		}
		pc.MaxInstallments = allowed
		v = Validation{}
		if checkPlans(&v, "", pc, tc.amount); len(v.Fields) > 0 {
			t.Fatalf("%s a month capped at %d: still refused: %+v", tc.rate, allowed, v.Fields)
		}
		for _, day := range []int{1, 10, 28, 31} {
			p, err := financedPlan(&c, pc, tc.amount, calSP(2026, time.March, 2, 10, 0, 0, 0), day, allowed)
			if err != nil {
				t.Fatalf("%s a month, %d installments on day %d: %v", tc.rate, allowed, day, err)
			}
			s := p.Schedule
			last := s.Bills[len(s.Bills)-1].AmountCents
			if d := last - s.InstallmentCents; d > max(2*int64(allowed-1), s.InstallmentCents/100) || -d > max(2*int64(allowed-1), s.InstallmentCents/100) {
				t.Errorf("%s a month, %d installments on day %d: installments of %d cents, the last %d", tc.rate, allowed, day, s.InstallmentCents, last)
			}
		}
		// A charge of 120 installments (the offer's before the cap) is
		// refused on installments, saying why.
		pc.MaxInstallments = 120
		_, err := financedPlan(&c, pc, tc.amount, calSP(2026, time.March, 2, 10, 0, 0, 0), 10, 120)
		var e *Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "installments" || !strings.Contains(e.Fields[0].Message, "choose fewer installments") {
			t.Errorf("%s a month, 120 installments: %v, want installments refused as uneven", tc.rate, err)
		}
	}
}

// Plans of up to 24 installments at up to 5% a month are never refused as
// uneven, whatever the amount and first period: their rounding reaches the
// last installment as at most 2 cents an installment.
func TestLevelPlansAreNeverUneven(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(18, 24))
	for range 20_000 {
		rate := RateFromDecimal(decimal.New(rng.Int64N(501), -4))
		n := 1 + rng.IntN(23)
		principal := int64(n) * (1 + rng.Int64N(10_000_000))
		days := int64(28 + rng.IntN(35))
		if _, err := priceTableCarried(principal, rate, n, prorataFactor(rate.Decimal(), days)); errors.Is(err, errUnevenPlan) {
			t.Fatalf("%d cents at %s a month in %d installments, %d days to the first: %v", principal, rate, n, days, err)
		}
	}
}

// financedPlan plans a charge of n installments, due on day, at now, of an
// order of an offer of amount cents sold through pc alone (its id
// "financed"), with a boleto down payment.
func financedPlan(c *Company, pc *PaymentConfiguration, amount int64, now time.Time, day, n int) (*ChargePlan, error) {
	o := &Order{CustomerBirthdate: "1990-05-17", Offer: &Offer{ID: "offer", AmountCents: amount, Availability: "enabled",
		PaymentConfigurations: []*PaymentConfiguration{pc}}}
	req := chargeReq("financed", MethodBoleto, 0)
	req.DueDay, req.Installments = &day, &n
	return PlanCharge(req, o, c, now, "")
}

// cappedAt is the count a refusal of max_installments names ("at most N
// installments …").
func cappedAt(t *testing.T, msg string) int {
	t.Helper()
	var n int
	i := strings.Index(msg, "at most ")
	if i < 0 {
		t.Fatalf("%q names no count", msg)
	}
	if _, err := fmt.Sscanf(msg[i:], "at most %d installments", &n); err != nil {
		t.Fatalf("%q names no count: %v", msg, err)
	}
	return n
}
