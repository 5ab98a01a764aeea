package parcela

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// schedTestBill is the expected shape of one scheduled bill: amount and its details.
type schedTestBill struct{ amount, down, fee, amort, interest int64 }

func TestBuildScheduleTable(t *testing.T) {
	t.Parallel()
	// Charged Thursday 5 March 2026 with 48 h to pay: the down payment is due
	// on 7 March, one month after which is 7 April, so due_day 10 puts
	// installment 1 on 10 April, 36 days after the charge. Installment 1 owes
	// 36 days of interest and the Price table runs on P·(1+i)^(6/30).
	//
	// Every figure below was recomputed by an independent model in 80-digit
	// decimal arithmetic (the CET by bisection to 10⁻⁸⁰).
	charged := calSP(2026, time.March, 5, 10, 0, 0, 0)
	tests := []struct {
		name                        string
		in                          ScheduleInput
		bills                       []schedTestBill
		total, principal, down, pmt int64
		interest                    int64
		cet                         string // "" for none
	}{
		{
			// 1.0299^0.2 = 1.00591…, carried 80472.8; f = 1.0299³ = 1.092408760899,
			// PMT = 80472.8·0.0299·f/(f−1) = 28444.3 → 28444. Interest 80472.8·1.0299 − 80000
			// = 2878.9 → 2879; 54435·0.0299 = 1627.6 → 1628; 27619·0.0299 = 825.8 → 826.
			name: "20% down, fee 5%, 2.99% a month, N=4",
			in: ScheduleInput{AmountCents: 100000, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.2"),
				RegistrationFee: MustRate("0.05"), InterestRate: MustRate("0.0299"), Installments: 4, DueDay: 10},
			bills: []schedTestBill{
				{amount: 25000, down: 20000, fee: 5000},
				{amount: 28444, amort: 25565, interest: 2879},
				{amount: 28444, amort: 26816, interest: 1628},
				{amount: 28445, amort: 27619, interest: 826},
			},
			total: 110333, principal: 80000, down: 20000, pmt: 28444, interest: 5333, cet: "1.044878",
		},
		{
			// 18518.4 → 18518 down, 2469.12 → 2469 fee; the last settles 18434 + 367.
			name: "15% down, fee 2%, 1.99% a month, N=7, last installment differs",
			in: ScheduleInput{AmountCents: 123456, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.15"),
				RegistrationFee: MustRate("0.02"), InterestRate: MustRate("0.0199"), Installments: 7, DueDay: 10},
			bills: []schedTestBill{
				{amount: 20987, down: 18518, fee: 2469},
				{amount: 18802, amort: 16291, interest: 2511},
				{amount: 18802, amort: 17038, interest: 1764},
				{amount: 18802, amort: 17377, interest: 1425},
				{amount: 18802, amort: 17723, interest: 1079},
				{amount: 18802, amort: 18075, interest: 727},
				{amount: 18801, amort: 18434, interest: 367},
			},
			total: 133798, principal: 104938, down: 18518, pmt: 18802, interest: 7873, cet: "0.371753",
		},
		{
			name:  "upfront",
			in:    ScheduleInput{AmountCents: 100000, Upfront: true, RegistrationFee: MustRate("0.05"), Installments: 1},
			bills: []schedTestBill{{amount: 105000, down: 100000, fee: 5000}},
			total: 105000, principal: 0, down: 100000, pmt: 0,
		},
		{
			// 89999 / 3 = 29999.67 → 30000; the last takes the leftover: 29999.
			// Neither interest nor a fee: the credit costs nothing.
			name: "absolute down payment, no interest, no fee",
			in: ScheduleInput{AmountCents: 100000, DownPaymentType: DownPaymentAbsolute, DownPaymentValue: RateFromInt(10001),
				InterestRate: MustRate("0"), Installments: 4, DueDay: 10},
			bills: []schedTestBill{
				{amount: 10001, down: 10001},
				{amount: 30000, amort: 30000},
				{amount: 30000, amort: 30000},
				{amount: 29999, amort: 29999},
			},
			total: 100000, principal: 89999, down: 10001, pmt: 30000, cet: "0",
		},
		{
			// 1234.5 → 1235 and 370.35 → 370: both rounded half-up. Without
			// interest the fee alone is the credit's cost: 370 cents on 11110.
			name: "down payment and fee rounded half-up",
			in: ScheduleInput{AmountCents: 12345, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.1"),
				RegistrationFee: MustRate("0.03"), Installments: 2, DueDay: 10},
			bills: []schedTestBill{
				{amount: 1605, down: 1235, fee: 370},
				{amount: 11110, amort: 11110},
			},
			total: 12715, principal: 11110, down: 1235, pmt: 11110, cet: "0.408822",
		},
		{
			name: "no down payment, the first bill is the fee",
			in: ScheduleInput{AmountCents: 90000, DownPaymentType: DownPaymentAbsolute, DownPaymentValue: RateFromInt(0),
				RegistrationFee: MustRate("0.01"), Installments: 4, DueDay: 10},
			bills: []schedTestBill{{amount: 900, fee: 900}, {amount: 30000, amort: 30000}, {amount: 30000, amort: 30000}, {amount: 30000, amort: 30000}},
			total: 90900, principal: 90000, down: 0, pmt: 30000, cet: "0.056883",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.in.ChargedAt, tt.in.ExpiresIn = charged, 48*time.Hour
			s, err := BuildSchedule(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if s.TotalCents != tt.total || s.PrincipalCents != tt.principal || s.DownPaymentCents != tt.down || s.InstallmentCents != tt.pmt {
				t.Errorf("totals = %d/%d/%d/%d, want total %d principal %d down %d pmt %d",
					s.TotalCents, s.PrincipalCents, s.DownPaymentCents, s.InstallmentCents, tt.total, tt.principal, tt.down, tt.pmt)
			}
			if s.TotalInterestCents != tt.interest {
				t.Errorf("TotalInterestCents = %d, want %d", s.TotalInterestCents, tt.interest)
			}
			switch {
			case tt.cet == "" && s.CETAnnualRate != nil:
				t.Errorf("CET = %s, want none", s.CETAnnualRate)
			case tt.cet != "" && (s.CETAnnualRate == nil || !s.CETAnnualRate.Equal(MustRate(tt.cet))):
				t.Errorf("CET = %v, want %s", s.CETAnnualRate, tt.cet)
			}
			if len(s.Bills) != len(tt.bills) {
				t.Fatalf("%d bills, want %d", len(s.Bills), len(tt.bills))
			}
			for k, b := range s.Bills {
				got := schedTestBill{b.AmountCents, b.Details.DownPaymentCents, b.Details.RegistrationFeeCents, b.Details.AmortizationCents, b.Details.InterestCents}
				if got != tt.bills[k] {
					t.Errorf("bill %d = %+v, want %+v", k, got, tt.bills[k])
				}
				wantType, wantDue := BillTypeInstallment, calEndOfDay(2026, time.April+time.Month(k-1), 10)
				if k == 0 {
					wantType, wantDue = BillTypeDownPayment, calSP(2026, time.March, 7, 10, 0, 0, 0)
				}
				if b.Number != k || b.Type != wantType || !b.DueDate.Equal(wantDue) || b.DueDate.Location() != SaoPaulo {
					t.Errorf("bill %d: number %d type %s due %v, want %s due %v", k, b.Number, b.Type, b.DueDate, wantType, wantDue)
				}
			}
			if s.RegistrationFeeCents != tt.bills[0].fee {
				t.Errorf("RegistrationFeeCents = %d, want %d", s.RegistrationFeeCents, tt.bills[0].fee)
			}
			if !tt.in.Upfront && s.FirstPeriodDays != 36 {
				t.Errorf("FirstPeriodDays = %d, want 36", s.FirstPeriodDays)
			}
		})
	}
}

func TestBuildScheduleDueDay31(t *testing.T) {
	t.Parallel()
	// Charged on 31 January with 24 h to pay: the down payment is due on
	// 1 February, one month after which is 1 March, so installment 1 is on
	// 31 March, then the last day of every month.
	tests := []struct {
		name    string
		charged time.Time
		want    []time.Time
	}{
		{"common year", calSP(2025, time.January, 31, 20, 0, 0, 0), []time.Time{
			calEndOfDay(2025, time.March, 31), calEndOfDay(2025, time.April, 30), calEndOfDay(2025, time.May, 31), calEndOfDay(2025, time.June, 30),
		}},
		{"leap year", calSP(2024, time.January, 31, 20, 0, 0, 0), []time.Time{
			calEndOfDay(2024, time.March, 31), calEndOfDay(2024, time.April, 30), calEndOfDay(2024, time.May, 31), calEndOfDay(2024, time.June, 30),
		}},
	}
	for _, tt := range tests {
		s, err := BuildSchedule(ScheduleInput{AmountCents: 120000, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.1"),
			InterestRate: MustRate("0"), Installments: 5, DueDay: 31, ChargedAt: tt.charged, ExpiresIn: 24 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if first := s.Bills[0].DueDate; !first.Equal(tt.charged.Add(24 * time.Hour)) {
			t.Errorf("%s: first bill due %v", tt.name, first)
		}
		for k, want := range tt.want {
			if b := s.Bills[k+1]; !b.DueDate.Equal(want) || b.AmountCents != 27000 {
				t.Errorf("%s: installment %d due %v amount %d, want %v 27000", tt.name, k+1, b.DueDate, b.AmountCents, want)
			}
		}
	}
}

func TestBuildScheduleErrors(t *testing.T) {
	t.Parallel()
	valid := ScheduleInput{AmountCents: 100000, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.2"),
		InterestRate: MustRate("0.02"), Installments: 4, DueDay: 10, ChargedAt: calSP(2026, time.March, 5, 10, 0, 0, 0), ExpiresIn: time.Hour}
	if _, err := BuildSchedule(valid); err != nil {
		t.Fatalf("valid input: %v", err)
	}
	unbounded := func(s string) Rate {
		var r Rate
		if err := r.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name   string
		change func(*ScheduleInput)
	}{
		{"zero installments", func(in *ScheduleInput) { in.Installments = 0 }},
		{"financed with 1 installment", func(in *ScheduleInput) { in.Installments = 1 }},
		{"121 installments", func(in *ScheduleInput) { in.Installments = 121 }},
		{"upfront with 2 installments", func(in *ScheduleInput) { in.Upfront, in.Installments = true, 2 }},
		{"due day 0", func(in *ScheduleInput) { in.DueDay = 0 }},
		{"due day 32", func(in *ScheduleInput) { in.DueDay = 32 }},
		{"zero amount", func(in *ScheduleInput) { in.AmountCents = 0 }},
		{"negative amount", func(in *ScheduleInput) { in.AmountCents = -1 }},
		{"amount above what a boleto carries", func(in *ScheduleInput) { in.AmountCents = MaxAmountCents + 1 }},
		{"amount at the limit, plus a fee", func(in *ScheduleInput) {
			in.AmountCents, in.Upfront, in.Installments, in.RegistrationFee = MaxAmountCents, true, 1, MustRate("0.01")
		}},
		{"negative fee", func(in *ScheduleInput) { in.RegistrationFee = MustRate("-0.01") }},
		{"fee above 100%", func(in *ScheduleInput) { in.RegistrationFee = MustRate("1.5") }},
		{"negative interest", func(in *ScheduleInput) { in.InterestRate = MustRate("-0.01") }},
		{"interest with 7 places", func(in *ScheduleInput) { in.InterestRate = MustRate("0.0000001") }},
		{"interest 1e-61", func(in *ScheduleInput) { in.InterestRate = unbounded("1e-61") }},
		{"interest 1e10000", func(in *ScheduleInput) { in.InterestRate = unbounded("1e10000") }},
		{"negative down payment", func(in *ScheduleInput) { in.DownPaymentValue = MustRate("-0.1") }},
		{"negative expiry", func(in *ScheduleInput) { in.ExpiresIn = -time.Hour }},
		{"percentage above 100%", func(in *ScheduleInput) { in.DownPaymentValue = MustRate("1.0001") }},
		{"absolute above amount", func(in *ScheduleInput) {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, RateFromInt(100001)
		}},
		{"absolute fraction of a cent", func(in *ScheduleInput) {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, MustRate("100.5")
		}},
		{"absolute 1e30", func(in *ScheduleInput) {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, unbounded("1e30")
		}},
		{"unknown down payment type", func(in *ScheduleInput) { in.DownPaymentType = "" }},
		// 71 / 47 = 1.51 → 2 cents, and 46 × 2 > 71: the plan would repay more than lent.
		{"principal too small", func(in *ScheduleInput) {
			in.AmountCents, in.DownPaymentType, in.DownPaymentValue, in.InterestRate, in.Installments = 600, DownPaymentAbsolute, RateFromInt(529), Rate{}, 48
		}},
		{"first bill of 0 cents", func(in *ScheduleInput) { in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, RateFromInt(0) }},
		{"100% down leaves installments of 0 cents", func(in *ScheduleInput) { in.DownPaymentValue = MustRate("1") }},
		{"absolute = amount leaves installments of 0 cents", func(in *ScheduleInput) {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, RateFromInt(100000)
		}},
	}
	for _, tt := range tests {
		in := valid
		tt.change(&in)
		if _, err := BuildSchedule(in); ErrorCode(err) != EINVALID {
			t.Errorf("%s: err = %v, want a %s error", tt.name, err, EINVALID)
		}
	}

	// The boundaries themselves are accepted.
	for name, change := range map[string]func(*ScheduleInput){
		"absolute 100.00": func(in *ScheduleInput) {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, MustRate("100.00")
		},
		"due day 31":          func(in *ScheduleInput) { in.DueDay = 31 },
		"120 installments":    func(in *ScheduleInput) { in.Installments, in.AmountCents = 120, 10_000_000 },
		"interest of 100%":    func(in *ScheduleInput) { in.InterestRate = MustRate("1") },
		"interest 0.000001":   func(in *ScheduleInput) { in.InterestRate = MustRate("0.000001") },
		"interest 0.02000000": func(in *ScheduleInput) { in.InterestRate = MustRate("0.02000000") },
		"amount at the limit": func(in *ScheduleInput) { in.AmountCents = MaxAmountCents },
		"upfront at the limit": func(in *ScheduleInput) {
			in.AmountCents, in.Upfront, in.Installments = MaxAmountCents, true, 1
		},
		"upfront ignores due day and rate": func(in *ScheduleInput) {
			in.Upfront, in.Installments, in.DueDay, in.InterestRate = true, 1, 0, MustRate("-1")
		},
	} {
		in := valid
		change(&in)
		if _, err := BuildSchedule(in); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
func TestPriceInstallment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    int64
		rate string
		n    int
		want int64
	}{
		{80000, "0.0299", 3, 28277},
		{104938, "0.0199", 6, 18728},
		{100000, "0", 3, 33333},
		{100000, "0", 6, 16667},    // 16666.67 rounds up
		{50, "0", 100, 1},          // 0.5 rounds half-up
		{100000, "0.01", 12, 8885}, // 8884.88
		{0, "0.05", 10, 0},
		{100000, "0.05", 0, 0},
	}
	for _, tt := range tests {
		if got := PriceInstallment(tt.p, MustRate(tt.rate), tt.n); got != tt.want {
			t.Errorf("PriceInstallment(%d, %s, %d) = %d, want %d", tt.p, tt.rate, tt.n, got, tt.want)
		}
	}
}

// closedPMT is the Price formula P·i/(1−(1+i)^−n) in 512-bit floats, as an
// independent check of the decimal implementation.
func closedPMT(p *big.Float, rate decimal.Decimal, n int) *big.Float {
	const prec = 512
	P := new(big.Float).SetPrec(prec).Set(p)
	if rate.IsZero() {
		return P.Quo(P, new(big.Float).SetPrec(prec).SetInt64(int64(n)))
	}
	i, _, err := big.ParseFloat(rate.String(), 10, prec, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	base := new(big.Float).SetPrec(prec).Add(one, i)
	f := new(big.Float).SetPrec(prec).SetInt64(1)
	for range n {
		f.Mul(f, base)
	}
	v := new(big.Float).SetPrec(prec).Quo(one, f)
	den := new(big.Float).SetPrec(prec).Sub(one, v)
	num := new(big.Float).SetPrec(prec).Mul(P, i)
	return num.Quo(num, den)
}

// schedHalfUp rounds a non-negative exact rational half-up, independently of decimal.
func schedHalfUp(r *big.Rat) int64 {
	twice := new(big.Rat).Mul(r, big.NewRat(2, 1))
	q := new(big.Int).Quo(twice.Num(), twice.Denom()) // floor(2r) for r ≥ 0
	return new(big.Int).Quo(q.Add(q, big.NewInt(1)), big.NewInt(2)).Int64()
}

// schedRoot30 is the 30th root of a > 0 by Newton's method in 512-bit floats,
// independently of decimal's RootRound.
func schedRoot30(a *big.Float) *big.Float {
	const prec = 512
	af, _ := a.Float64()
	y := new(big.Float).SetPrec(prec).SetFloat64(math.Pow(af, 1.0/30)) // a start good to 15 digits …
	for range 6 {                                                      // … that Newton doubles each step
		y29 := new(big.Float).SetPrec(prec).SetInt64(1)
		for range 29 {
			y29.Mul(y29, y)
		}
		y30 := new(big.Float).SetPrec(prec).Mul(y29, y)
		num := new(big.Float).SetPrec(prec).Sub(y30, a)
		den := new(big.Float).SetPrec(prec).Mul(y29, big.NewFloat(30))
		y.Sub(y, num.Quo(num, den))
	}
	return y
}

// schedCarried is P·(1+i)^(d/30 − 1) in 512-bit floats.
func schedCarried(p int64, rate decimal.Decimal, days int64) *big.Float {
	const prec = 512
	i, _, err := big.ParseFloat(rate.String(), 10, prec, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	base := new(big.Float).SetPrec(prec).Add(big.NewFloat(1), i)
	pow := new(big.Float).SetPrec(prec).SetInt64(1)
	e := days - 30
	for range max(e, -e) {
		pow.Mul(pow, base)
	}
	if e < 0 {
		pow.Quo(new(big.Float).SetPrec(prec).SetInt64(1), pow)
	}
	return new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetInt64(p), schedRoot30(pow))
}

func TestScheduleProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2026, 3))
	start := time.Date(2020, time.January, 1, 0, 0, 0, 0, time.UTC).Unix()
	const runs = 3000
	refused := 0
	for run := range runs {
		in := ScheduleInput{
			AmountCents:     500 + rng.Int64N(10_000_000-500+1),
			RegistrationFee: RateFromDecimal(decimal.New(rng.Int64N(501), -4)),
			InterestRate:    RateFromDecimal(decimal.New(rng.Int64N(1001), -4)),
			Installments:    1 + rng.IntN(48),
			DueDay:          1 + rng.IntN(31),
			ChargedAt:       time.Unix(start+rng.Int64N(16*365*24*3600), 0),
			ExpiresIn:       time.Duration(1+rng.IntN(720)) * time.Hour,
		}
		in.Upfront = in.Installments == 1
		if rng.IntN(2) == 0 {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentPercentage, RateFromDecimal(decimal.New(rng.Int64N(10001), -4))
		} else {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, RateFromInt(rng.Int64N(in.AmountCents+1))
		}
		if rng.IntN(20) == 0 { // a principal of a few reais, where rounding leftovers matter most
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, RateFromInt(in.AmountCents-rng.Int64N(min(in.AmountCents, 5000)+1))
		}

		s, err := BuildSchedule(in)
		if err != nil {
			if errors.Is(err, errUnevenPlan) {
				// The definition's own table must be uneven too.
				if ref := refSchedule(in, in.InterestRate.Decimal().Rat(), in.RegistrationFee.Decimal().Rat(), in.DownPaymentValue.Decimal().Rat()); !ref.uneven() {
					t.Fatalf("run %d: %+v: refused as uneven (%v), but the definition's last installment is level", run, in, err)
				}
				refused++
				continue
			}
			if why := schedCheckRefusal(in); ErrorCode(err) != EINVALID || in.Upfront || (why != "" && !schedCostBeyondMax(in)) {
				t.Fatalf("run %d: %+v: refused (%v): %s", run, in, err, why)
			}
			refused++
			continue
		}
		if msg := schedCheck(in, s); msg != "" {
			t.Fatalf("run %d: %+v: %s", run, in, msg)
		}
	}
	if refused > runs/10 {
		t.Errorf("%d of %d random schedules refused", refused, runs)
	}
	t.Logf("%d random schedules checked, %d refused for a 0-cent bill, a principal under 1 real per installment or a CET beyond the maximum", runs-refused, refused)
}

// The schedule's invariants at the limits of its input: amounts from 1 cent
// to MaxAmountCents, rates from a millionth to 100% a month, fees up to
// the whole amount, 2 to MaxInstallments bills, down payments of 0, the
// whole amount and a cent short of it. A schedule is built or refused
// with EINVALID, never a panic or a wrapped-around amount.
func TestSchedulePropertiesAtTheLimits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2026, 11))
	start := time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC).Unix()
	amounts := []int64{1, 2, 99, 100, 500, 12_345, 100_000_000, MaxAmountCents - 1, MaxAmountCents}
	rates := []string{"0", "0.000001", "0.01", "0.0499", "0.1", "0.5", "0.999999", "1"}
	fees := []string{"0", "0.000001", "0.05", "1"}
	counts := []int{1, 2, 3, 12, 60, MaxInstallments - 1, MaxInstallments}
	built := 0
	for run := range 3000 {
		in := ScheduleInput{
			AmountCents:     amounts[rng.IntN(len(amounts))],
			RegistrationFee: MustRate(fees[rng.IntN(len(fees))]),
			InterestRate:    MustRate(rates[rng.IntN(len(rates))]),
			Installments:    counts[rng.IntN(len(counts))],
			DueDay:          1 + rng.IntN(31),
			ChargedAt:       time.Unix(start+rng.Int64N(4*365*24*3600), 0),
			ExpiresIn:       time.Duration(1+rng.IntN(720)) * time.Hour,
		}
		if rng.IntN(3) == 0 {
			in.AmountCents = 1 + rng.Int64N(MaxAmountCents)
		}
		in.Upfront = in.Installments == 1
		switch rng.IntN(4) {
		case 0:
			in.DownPaymentType, in.DownPaymentValue = DownPaymentPercentage, MustRate([]string{"0", "0.000001", "0.5", "0.999999", "1"}[rng.IntN(5)])
		case 1:
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, RateFromInt(rng.Int64N(in.AmountCents+1))
		default:
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, RateFromInt([]int64{0, in.AmountCents - 1, in.AmountCents}[rng.IntN(3)])
		}
		s, err := BuildSchedule(in)
		if err != nil {
			if ErrorCode(err) != EINVALID || in.Upfront && in.AmountCents+in.RegistrationFee.MulCents(in.AmountCents) <= MaxAmountCents {
				t.Fatalf("run %d: %+v: %v", run, in, err)
			}
			continue
		}
		built++
		if msg := schedCheck(in, s); msg != "" {
			t.Fatalf("run %d: %+v: %s", run, in, msg)
		}
	}
	if built < 1000 {
		t.Errorf("only %d of 3000 schedules at the limits were built", built)
	}
}

// schedCheckRefusal reports why refusing in was wrong, or "" when the plan
// would have a bill of 0 cents or a principal under 100 cents per installment.
func schedCheckRefusal(in ScheduleInput) string {
	var down int64
	if in.DownPaymentType == DownPaymentAbsolute {
		down = in.DownPaymentValue.Decimal().IntPart()
	} else {
		down = schedHalfUp(new(big.Rat).Mul(big.NewRat(in.AmountCents, 1), in.DownPaymentValue.Decimal().Rat()))
	}
	fee := schedHalfUp(new(big.Rat).Mul(big.NewRat(in.AmountCents, 1), in.RegistrationFee.Decimal().Rat()))
	if down+fee == 0 {
		return ""
	}
	if p, n := in.AmountCents-down, int64(in.Installments-1); p >= 100*n {
		return "neither a 0-cent bill nor a principal that small"
	}
	return ""
}

// schedCostBeyondMax reports whether the plan's flows, discounted at the
// daily rate of MaxCETAnnualRate, are still worth more than the principal:
// its CET would be higher. Evaluated in 512-bit floats.
func schedCostBeyondMax(in ScheduleInput) bool {
	s, err := buildBills(in)
	if err != nil {
		return false
	}
	const prec = 512
	x, _, _ := big.ParseFloat("0.032046", 10, prec, big.ToNearestEven)
	v := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1), new(big.Float).SetPrec(prec).Add(big.NewFloat(1), x))
	worth := new(big.Float).SetPrec(prec)
	cy, cm, cd := in.ChargedAt.In(SaoPaulo).Date()
	for _, b := range s.Bills {
		y, m, d := b.DueDate.In(SaoPaulo).Date()
		days := int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Sub(time.Date(cy, cm, cd, 0, 0, 0, 0, time.UTC)) / (24 * time.Hour))
		f := new(big.Float).SetPrec(prec).SetInt64(b.AmountCents - b.Details.DownPaymentCents)
		for range days {
			f.Mul(f, v)
		}
		worth.Add(worth, f)
	}
	return worth.Cmp(new(big.Float).SetInt64(s.PrincipalCents)) > 0
}

// schedCheck returns the first broken invariant of s, or "".
func schedCheck(in ScheduleInput, s Schedule) string {
	if len(s.Bills) != in.Installments {
		return "wrong number of bills"
	}
	var total, amort, interest int64
	for k, b := range s.Bills {
		d := b.Details
		total += b.AmountCents
		amort += d.AmortizationCents
		interest += d.InterestCents
		if b.AmountCents != d.DownPaymentCents+d.RegistrationFeeCents+d.AmortizationCents+d.InterestCents {
			return "bill amount is not the sum of its details"
		}
		if b.AmountCents < 1 || b.AmountCents > MaxAmountCents {
			return "bill amount a boleto cannot carry"
		}
		if b.Number != k || b.DueDate.Location() != SaoPaulo {
			return "bad number or zone"
		}
		if k > 0 && !b.DueDate.After(s.Bills[k-1].DueDate) {
			return "due dates not strictly increasing"
		}
	}
	first := s.Bills[0]
	fee := schedHalfUp(new(big.Rat).Mul(big.NewRat(in.AmountCents, 1), in.RegistrationFee.Decimal().Rat()))
	switch {
	case total != s.TotalCents:
		return "Σ bill amounts ≠ TotalCents"
	case interest != s.TotalInterestCents:
		return "Σ interest ≠ TotalInterestCents"
	case amort != s.PrincipalCents:
		return "Σ amortization ≠ principal"
	case s.PrincipalCents+s.DownPaymentCents != in.AmountCents:
		return "principal + down payment ≠ amount"
	case first.Type != BillTypeDownPayment || first.Details.DownPaymentCents != s.DownPaymentCents || first.Details.RegistrationFeeCents != fee || s.RegistrationFeeCents != fee:
		return "first bill is not down payment + fee"
	case !first.DueDate.Equal(in.ChargedAt.Add(in.ExpiresIn)):
		return "first bill not due at charge + expiry"
	case in.Upfront && (s.InstallmentCents != 0 || first.Details.DownPaymentCents != in.AmountCents || s.CETAnnualRate != nil):
		return "upfront bill is not the whole amount, or discloses a CET"
	}
	if in.Upfront {
		return ""
	}
	if s.CETAnnualRate == nil || s.CETAnnualRate.IsNegative() || (s.TotalInterestCents == 0 && fee == 0) && !s.CETAnnualRate.IsZero() {
		return "CET missing, negative, or not zero for a free credit"
	}
	if s.CETAnnualRate.IsZero() && !schedCostRoundsToZero(s.PrincipalCents, s.TotalInterestCents+fee, calendarDaysBetween(in.ChargedAt, s.Bills[len(s.Bills)-1].DueDate)) {
		return "CET zero for a credit that costs more than rounds to zero"
	}
	if msg := schedCheckDueDates(in, s); msg != "" {
		return msg
	}

	n := in.Installments - 1
	pmt := s.InstallmentCents
	rate := in.InterestRate.Decimal()
	carried := schedCarried(s.PrincipalCents, rate, s.FirstPeriodDays)
	exact := closedPMT(carried, rate, n)
	diff := new(big.Float).Sub(new(big.Float).SetInt64(pmt), exact)
	if diff.Abs(diff).Cmp(big.NewFloat(0.5000001)) > 0 {
		return "PMT more than half a cent from the closed formula on the carried principal"
	}

	r := rate.Rat()
	left, unpaid := s.PrincipalCents, int64(0)
	for k := 1; k <= n; k++ {
		b := s.Bills[k]
		if b.Type != BillTypeInstallment || b.Details.DownPaymentCents != 0 || b.Details.RegistrationFeeCents != 0 {
			return "installment has down-payment details"
		}
		if k < n && b.AmountCents != pmt {
			return "installment other than the last ≠ PMT"
		}
		var owed int64
		if k == 1 {
			i1 := new(big.Float).Mul(carried, new(big.Float).Add(big.NewFloat(1), new(big.Float).SetRat(r)))
			i1.Sub(i1, new(big.Float).SetInt64(s.PrincipalCents))
			i1.Add(i1, big.NewFloat(0.5))
			owed, _ = i1.Int64() // floor(x + 0.5): half-up for x ≥ 0
		} else {
			owed = unpaid + schedHalfUp(new(big.Rat).Mul(big.NewRat(left+unpaid, 1), r))
		}
		wantInterest, wantAmort := min(owed, pmt), pmt-min(owed, pmt)
		if k == n {
			wantInterest, wantAmort = owed, left
		}
		if b.Details.InterestCents != wantInterest || b.Details.AmortizationCents != wantAmort {
			return "installment's interest and amortization do not follow the balance"
		}
		left, unpaid = left-wantAmort, owed-wantInterest
	}
	if left != 0 {
		return "balance not settled"
	}
	return ""
}

// schedCostRoundsToZero tells whether a credit of principal cents that
// costs cost cents in all, repaid within days, can have a CET that rounds
// to zero at CETPlaces: only if the cost is below half a millionth of the
// principal for each year it runs, as a CET is at least the cost spread
// over the principal and the whole term.
func schedCostRoundsToZero(principal, cost, days int64) bool {
	return cost == 0 || new(big.Int).Mul(big.NewInt(cost), big.NewInt(2_000_000*365)).Cmp(new(big.Int).Mul(big.NewInt(principal), big.NewInt(days))) < 0
}

// schedCheckDueDates checks the installments' dates by their definition:
// installment 1 is the first due_day (clamped) on or after one month after
// the down payment's São Paulo date, and each next one a month later.
func schedCheckDueDates(in ScheduleInput, s Schedule) string {
	y, m, d := s.Bills[0].DueDate.In(SaoPaulo).Date()
	oneMonthAfter := time.Date(y, m+1, min(d, daysIn(y, m+1)), 0, 0, 0, 0, time.UTC) // daysIn normalises the month
	var prevMonth time.Time
	for k := 1; k < len(s.Bills); k++ {
		local := s.Bills[k].DueDate.In(SaoPaulo)
		ly, lm, ld := local.Date()
		if h, mi, sec := local.Clock(); h != 23 || mi != 59 || sec != 59 || local.Nanosecond() != 999_000_000 {
			return "installment not due at 23:59:59.999 São Paulo"
		}
		if ld != min(in.DueDay, daysIn(ly, lm)) {
			return "installment not due on the (clamped) due day"
		}
		month := time.Date(ly, lm, 1, 0, 0, 0, 0, time.UTC)
		if k > 1 && !month.Equal(prevMonth.AddDate(0, 1, 0)) {
			return "installments not in consecutive months"
		}
		prevMonth = month
		if k == 1 {
			date := time.Date(ly, lm, ld, 0, 0, 0, 0, time.UTC)
			before := month.AddDate(0, -1, 0)
			earlier := time.Date(before.Year(), before.Month(), min(in.DueDay, daysIn(before.Year(), before.Month())), 0, 0, 0, 0, time.UTC)
			if date.Before(oneMonthAfter) || !earlier.Before(oneMonthAfter) {
				return "installment 1 is not the first due day at least one month after the down payment"
			}
			cy, cm, cd := in.ChargedAt.In(SaoPaulo).Date()
			if days := int64(date.Sub(time.Date(cy, cm, cd, 0, 0, 0, 0, time.UTC)) / (24 * time.Hour)); days != s.FirstPeriodDays {
				return "FirstPeriodDays is not the days from the charge to installment 1"
			}
		}
	}
	return ""
}

func TestScheduledBillEffectiveDueDate(t *testing.T) {
	t.Parallel()
	// Charged Friday 2026-11-20 (a holiday) at 10:00 with 24 h to pay: the
	// first bill is late the moment its payment expires, Saturday 10:00,
	// weekend or not. One month after the down payment is 21 December, so
	// installment 1 falls on Thursday 31 December, when banks do not
	// settle; 1 January is a holiday and 2–3 January a weekend, so it is
	// late only after Monday 4 January 2027.
	s, err := BuildSchedule(ScheduleInput{AmountCents: 100000, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.2"),
		InterestRate: MustRate("0.01"), Installments: 3, DueDay: 31, ChargedAt: time.Date(2026, 11, 20, 10, 0, 0, 0, SaoPaulo), ExpiresIn: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Bills[0].EffectiveDueDate(), time.Date(2026, 11, 21, 10, 0, 0, 0, SaoPaulo); !got.Equal(want) {
		t.Errorf("first bill effective due %v, want %v", got, want)
	}
	if got, want := s.Bills[1].DueDate, calEndOfDay(2026, time.December, 31); !got.Equal(want) {
		t.Errorf("installment due %v, want %v", got, want)
	}
	if got, want := s.Bills[1].EffectiveDueDate(), calEndOfDay(2027, time.January, 4); !got.Equal(want) {
		t.Errorf("installment effective due %v, want %v", got, want)
	}
}
