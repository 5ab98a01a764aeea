package parcela

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// checkPlans told a seller "at most 102 installments keep every plan
// level", and the offer capped there was then refused for a CET above the
// maximum, with no fee: the cost's bound priced the plan at 28 days, a
// first period this configuration (720 h to the down payment) never has,
// where the table is uneven (a review). The bound reads the table without
// the level rule, which is checkPlans' at the periods a charge can have.
func TestOfferCappedLevelIsAccepted(t *testing.T) {
	t.Parallel()
	dpType := DownPaymentPercentage
	pc := &PaymentConfiguration{ID: "financed", PaymentType: Financed, PaymentMethods: []string{MethodBoleto},
		AllowedDownPaymentMethods: []string{MethodBoleto}, Availability: "enabled", ExpiresIn: 720, MaxInstallments: 120,
		DownPaymentType: &dpType, DownPaymentValue: MustRate("0.1"), InterestRate: MustRate("0.0574"), RegistrationFee: MustRate("0")}
	const amount = 4346448
	var v Validation
	checkPlans(&v, "", pc, amount)
	if len(v.Fields) != 1 || !strings.Contains(v.Fields[0].Message, "at most 102 installments keep every plan level") {
		t.Fatalf("%+v", v.Fields)
	}
	pc.MaxInstallments = 102
	v = Validation{}
	if checkPlans(&v, "", pc, amount); len(v.Fields) > 0 {
		t.Fatalf("capped where it said, still refused: %+v", v.Fields)
	}
}

// Offers capped as uneven are accepted at their cap, and charge its last
// counts on any date, due day and time to the down payment.
func TestOffersCappedLevelCharge(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(56, 1))
	dates := []time.Time{
		time.Date(2026, 12, 31, 23, 30, 0, 0, SaoPaulo), time.Date(2027, 1, 31, 12, 0, 0, 0, SaoPaulo),
		time.Date(2028, 2, 29, 9, 0, 0, 0, SaoPaulo), time.Date(2027, 2, 28, 18, 0, 0, 0, SaoPaulo),
		time.Date(2027, 7, 31, 8, 0, 0, 0, SaoPaulo), time.Date(2027, 3, 30, 8, 0, 0, 0, SaoPaulo),
		time.Date(2027, 1, 29, 8, 0, 0, 0, SaoPaulo), time.Date(2027, 1, 1, 0, 10, 0, 0, SaoPaulo),
	}
	capped := 0
	for run := range 60 {
		c := NewCompany("Escola", "11222333000181", "escola")
		c.MaxInstallments = MaxInstallments
		dpType := DownPaymentPercentage
		rate := RateFromDecimal(decimal.New(300+rng.Int64N(1200), -4))
		amount := 5000 + rng.Int64N(200_000_00)
		pc := &PaymentConfiguration{ID: "financed", PaymentType: Financed, PaymentMethods: []string{MethodBoleto},
			AllowedDownPaymentMethods: []string{MethodBoleto}, Availability: "enabled",
			ExpiresIn: []int{1, 24, 25, 48, 72, 168, 720}[rng.IntN(7)], MaxInstallments: 120,
			DownPaymentType: &dpType, DownPaymentValue: MustRate("0.1"), InterestRate: rate, RegistrationFee: MustRate("0")}
		var v Validation
		checkPlans(&v, "", pc, amount)
		if len(v.Fields) == 0 || !strings.Contains(v.Fields[0].Message, "not level") {
			continue
		}
		allowed := cappedAt(t, v.Fields[0].Message)
		pc.MaxInstallments = allowed
		v = Validation{}
		if checkPlans(&v, "", pc, amount); len(v.Fields) > 0 {
			t.Errorf("run %d: %d cents at %s, expires %dh, capped at %d: then refused %+v", run, amount, rate, pc.ExpiresIn, allowed, v.Fields)
			continue
		}
		capped++
		for range 6 {
			now := dates[rng.IntN(len(dates))].Add(time.Duration(rng.IntN(86400)) * time.Second)
			day := 1 + rng.IntN(31)
			n := max(2, allowed-rng.IntN(3))
			if _, err := financedPlan(&c, pc, amount, now, day, n); err != nil {
				t.Errorf("run %d: %d cents at %s, expires %dh, cap %d: %d installments on day %d at %v refused: %v", run, amount, rate, pc.ExpiresIn, allowed, n, day, now, err)
			}
		}
	}
	if capped < 10 {
		t.Fatalf("only %d offers capped as uneven", capped)
	}
}
