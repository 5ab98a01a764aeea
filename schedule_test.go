package parcela

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// schedTestBill is the expected shape of one scheduled bill: amount and its details.
type schedTestBill struct{ amount, down, fee, amort, interest int64 }

func TestBuildScheduleTable(t *testing.T) {
	charged := calSP(2026, time.March, 5, 10, 0, 0, 0)
	tests := []struct {
		name                        string
		in                          ScheduleInput
		bills                       []schedTestBill
		total, principal, down, pmt int64
	}{
		{
			// Hand-checked: 1.0299³ = 1.092408760899, PMT = 80000·0.0299·f/(f−1) = 28276.99 → 28277.
			// Interest 80000·0.0299 = 2392; 54115·0.0299 = 1618.04 → 1618; 27456·0.0299 = 820.93 → 821.
			name: "20% down, fee 5%, 2.99% a month, N=4",
			in: ScheduleInput{AmountCents: 100000, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.2"),
				RegistrationFee: MustRate("0.05"), InterestRate: MustRate("0.0299"), Installments: 4, DueDay: 10},
			bills: []schedTestBill{
				{amount: 25000, down: 20000, fee: 5000},
				{amount: 28277, amort: 25885, interest: 2392},
				{amount: 28277, amort: 26659, interest: 1618},
				{amount: 28277, amort: 27456, interest: 821},
			},
			total: 109831, principal: 80000, down: 20000, pmt: 28277,
		},
		{
			// 18518.4 → 18518 down, 2469.12 → 2469 fee; PMT 18727.82 → 18728; the last settles 18361 + 365.
			name: "15% down, fee 2%, 1.99% a month, N=7, last installment differs",
			in: ScheduleInput{AmountCents: 123456, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.15"),
				RegistrationFee: MustRate("0.02"), InterestRate: MustRate("0.0199"), Installments: 7, DueDay: 10},
			bills: []schedTestBill{
				{amount: 20987, down: 18518, fee: 2469},
				{amount: 18728, amort: 16640, interest: 2088},
				{amount: 18728, amort: 16971, interest: 1757},
				{amount: 18728, amort: 17309, interest: 1419},
				{amount: 18728, amort: 17653, interest: 1075},
				{amount: 18728, amort: 18004, interest: 724},
				{amount: 18726, amort: 18361, interest: 365},
			},
			total: 133353, principal: 104938, down: 18518, pmt: 18728,
		},
		{
			name:  "upfront",
			in:    ScheduleInput{AmountCents: 100000, Upfront: true, RegistrationFee: MustRate("0.05"), Installments: 1},
			bills: []schedTestBill{{amount: 105000, down: 100000, fee: 5000}},
			total: 105000, principal: 0, down: 100000, pmt: 0,
		},
		{
			// 89999 / 3 = 29999.67 → 30000; the last takes the leftover: 29999.
			name: "absolute down payment, no interest, no fee",
			in: ScheduleInput{AmountCents: 100000, DownPaymentType: DownPaymentAbsolute, DownPaymentValue: RateFromInt(10001),
				InterestRate: MustRate("0"), Installments: 4, DueDay: 10},
			bills: []schedTestBill{
				{amount: 10001, down: 10001},
				{amount: 30000, amort: 30000},
				{amount: 30000, amort: 30000},
				{amount: 29999, amort: 29999},
			},
			total: 100000, principal: 89999, down: 10001, pmt: 30000,
		},
		{
			// 1234.5 → 1235 and 370.35 → 370: both rounded half-up.
			name: "down payment and fee rounded half-up",
			in: ScheduleInput{AmountCents: 12345, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.1"),
				RegistrationFee: MustRate("0.03"), Installments: 2, DueDay: 10},
			bills: []schedTestBill{
				{amount: 1605, down: 1235, fee: 370},
				{amount: 11110, amort: 11110},
			},
			total: 12715, principal: 11110, down: 1235, pmt: 11110,
		},
		{
			name: "no down payment",
			in: ScheduleInput{AmountCents: 90000, DownPaymentType: DownPaymentAbsolute, DownPaymentValue: RateFromInt(0),
				Installments: 4, DueDay: 10},
			bills: []schedTestBill{{}, {amount: 30000, amort: 30000}, {amount: 30000, amort: 30000}, {amount: 30000, amort: 30000}},
			total: 90000, principal: 90000, down: 0, pmt: 30000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.ChargedAt, tt.in.ExpiresIn = charged, 48*time.Hour
			s, err := BuildSchedule(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if s.TotalCents != tt.total || s.PrincipalCents != tt.principal || s.DownPaymentCents != tt.down || s.InstallmentCents != tt.pmt {
				t.Errorf("totals = %d/%d/%d/%d, want total %d principal %d down %d pmt %d",
					s.TotalCents, s.PrincipalCents, s.DownPaymentCents, s.InstallmentCents, tt.total, tt.principal, tt.down, tt.pmt)
			}
			if len(s.Bills) != len(tt.bills) {
				t.Fatalf("%d bills, want %d", len(s.Bills), len(tt.bills))
			}
			for k, b := range s.Bills {
				got := schedTestBill{b.AmountCents, b.Details.DownPaymentCents, b.Details.RegistrationFeeCents, b.Details.AmortizationCents, b.Details.InterestCents}
				if got != tt.bills[k] {
					t.Errorf("bill %d = %+v, want %+v", k, got, tt.bills[k])
				}
				wantType, wantDue := BillTypeInstallment, InstallmentDueDate(charged, k, 10)
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
		})
	}
}

func TestBuildScheduleDueDay31(t *testing.T) {
	tests := []struct {
		name    string
		charged time.Time
		want    []time.Time
	}{
		{"common year", calSP(2025, time.January, 31, 20, 0, 0, 0), []time.Time{
			calEndOfDay(2025, time.February, 28), calEndOfDay(2025, time.March, 31), calEndOfDay(2025, time.April, 30), calEndOfDay(2025, time.May, 31),
		}},
		{"leap year", calSP(2024, time.January, 31, 20, 0, 0, 0), []time.Time{
			calEndOfDay(2024, time.February, 29), calEndOfDay(2024, time.March, 31), calEndOfDay(2024, time.April, 30), calEndOfDay(2024, time.May, 31),
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
	valid := ScheduleInput{AmountCents: 100000, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.2"),
		InterestRate: MustRate("0.02"), Installments: 4, DueDay: 10, ChargedAt: calSP(2026, time.March, 5, 10, 0, 0, 0), ExpiresIn: time.Hour}
	if _, err := BuildSchedule(valid); err != nil {
		t.Fatalf("valid input: %v", err)
	}
	tests := []struct {
		name   string
		change func(*ScheduleInput)
	}{
		{"zero installments", func(in *ScheduleInput) { in.Installments = 0 }},
		{"financed with 1 installment", func(in *ScheduleInput) { in.Installments = 1 }},
		{"upfront with 2 installments", func(in *ScheduleInput) { in.Upfront, in.Installments = true, 2 }},
		{"due day 0", func(in *ScheduleInput) { in.DueDay = 0 }},
		{"due day 32", func(in *ScheduleInput) { in.DueDay = 32 }},
		{"zero amount", func(in *ScheduleInput) { in.AmountCents = 0 }},
		{"negative amount", func(in *ScheduleInput) { in.AmountCents = -1 }},
		{"negative fee", func(in *ScheduleInput) { in.RegistrationFee = MustRate("-0.01") }},
		{"negative interest", func(in *ScheduleInput) { in.InterestRate = MustRate("-0.01") }},
		{"negative down payment", func(in *ScheduleInput) { in.DownPaymentValue = MustRate("-0.1") }},
		{"negative expiry", func(in *ScheduleInput) { in.ExpiresIn = -time.Hour }},
		{"percentage above 100%", func(in *ScheduleInput) { in.DownPaymentValue = MustRate("1.0001") }},
		{"absolute above amount", func(in *ScheduleInput) {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, RateFromInt(100001)
		}},
		{"absolute fraction of a cent", func(in *ScheduleInput) {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, MustRate("100.5")
		}},
		{"unknown down payment type", func(in *ScheduleInput) { in.DownPaymentType = "" }},
		// 71 / 47 = 1.51 → 2 cents, and 46 × 2 > 71: the plan would repay more than lent.
		{"principal too small", func(in *ScheduleInput) {
			in.AmountCents, in.DownPaymentType, in.DownPaymentValue, in.InterestRate, in.Installments = 600, DownPaymentAbsolute, RateFromInt(529), Rate{}, 48
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
		"100% down": func(in *ScheduleInput) { in.DownPaymentValue = MustRate("1") },
		"absolute = amount": func(in *ScheduleInput) {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, RateFromInt(100000)
		},
		"absolute 100.00": func(in *ScheduleInput) {
			in.DownPaymentType, in.DownPaymentValue = DownPaymentAbsolute, MustRate("100.00")
		},
		"due day 31": func(in *ScheduleInput) { in.DueDay = 31 },
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
func closedPMT(p int64, rate decimal.Decimal, n int) *big.Float {
	const prec = 512
	P := new(big.Float).SetPrec(prec).SetInt64(p)
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

func TestScheduleProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 3))
	start := time.Date(2020, time.January, 1, 0, 0, 0, 0, time.UTC).Unix()
	const runs = 5000
	tooSmall := 0
	for run := range runs {
		in := ScheduleInput{
			AmountCents:     500 + rng.Int64N(10_000_000-500+1),
			RegistrationFee: RateFromDecimal(decimal.New(rng.Int64N(1001), -4)),
			InterestRate:    RateFromDecimal(decimal.New(rng.Int64N(1001), -4)),
			Installments:    1 + rng.IntN(48),
			DueDay:          1 + rng.IntN(31),
			ChargedAt:       time.Unix(start+rng.Int64N(16*365*24*3600), 0),
			ExpiresIn:       time.Duration(1+rng.IntN(72)) * time.Hour,
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
			// Only a principal of under one real per installment may be refused.
			if ErrorCode(err) != EINVALID || in.Upfront || s.PrincipalCents != 0 {
				t.Fatalf("run %d: %+v: %v", run, in, err)
			}
			if err := schedCheckTooSmall(in); err != "" {
				t.Fatalf("run %d: %+v: refused: %s", run, in, err)
			}
			tooSmall++
			continue
		}
		if msg := schedCheck(in, s); msg != "" {
			t.Fatalf("run %d: %+v: %s", run, in, msg)
		}
	}
	if tooSmall > runs/50 {
		t.Errorf("%d of %d random schedules refused as too small", tooSmall, runs)
	}
	t.Logf("%d random schedules checked, %d refused for a principal under 1 real per installment", runs-tooSmall, tooSmall)
}

// schedCheckTooSmall reports why a refusal was wrong, or "" when the
// principal really is under 100 cents per installment.
func schedCheckTooSmall(in ScheduleInput) string {
	var down int64
	if in.DownPaymentType == DownPaymentAbsolute {
		down = in.DownPaymentValue.Decimal().IntPart()
	} else {
		down = in.DownPaymentValue.MulCents(in.AmountCents)
	}
	if p, n := in.AmountCents-down, int64(in.Installments-1); p >= 100*n {
		return "principal is not that small"
	}
	return ""
}

// schedCheck returns the first broken invariant of s, or "".
func schedCheck(in ScheduleInput, s Schedule) string {
	if len(s.Bills) != in.Installments {
		return "wrong number of bills"
	}
	var total, amort int64
	for k, b := range s.Bills {
		d := b.Details
		total += b.AmountCents
		amort += d.AmortizationCents
		if b.AmountCents != d.DownPaymentCents+d.RegistrationFeeCents+d.AmortizationCents+d.InterestCents {
			return "bill amount is not the sum of its details"
		}
		if b.Number != k || b.DueDate.Location() != SaoPaulo {
			return "bad number or zone"
		}
		// The first bill is due ExpiresIn after the charge, so it can only be
		// guaranteed to precede installment 1 (due day 1 of next month, at the
		// earliest) when ExpiresIn is under a day.
		if k > 0 && (k > 1 || in.ExpiresIn < 24*time.Hour) && !b.DueDate.After(s.Bills[k-1].DueDate) {
			return "due dates not strictly increasing"
		}
	}
	first := s.Bills[0]
	fee := in.RegistrationFee.MulCents(in.AmountCents)
	switch {
	case total != s.TotalCents:
		return "Σ bill amounts ≠ TotalCents"
	case amort != s.PrincipalCents:
		return "Σ amortization ≠ principal"
	case s.PrincipalCents+s.DownPaymentCents != in.AmountCents:
		return "principal + down payment ≠ amount"
	case first.Type != BillTypeDownPayment || first.Details.DownPaymentCents != s.DownPaymentCents || first.Details.RegistrationFeeCents != fee || s.RegistrationFeeCents != fee:
		return "first bill is not down payment + fee"
	case !first.DueDate.Equal(in.ChargedAt.Add(in.ExpiresIn)):
		return "first bill not due at charge + expiry"
	case in.Upfront && (s.InstallmentCents != 0 || first.Details.DownPaymentCents != in.AmountCents):
		return "upfront bill is not the whole amount"
	}
	if in.Upfront {
		return ""
	}

	n := in.Installments - 1
	pmt := s.InstallmentCents
	if pmt != PriceInstallment(s.PrincipalCents, in.InterestRate, n) {
		return "InstallmentCents ≠ PriceInstallment"
	}
	exact := closedPMT(s.PrincipalCents, in.InterestRate.Decimal(), n)
	diff := new(big.Float).Sub(new(big.Float).SetInt64(pmt), exact)
	if diff.Abs(diff).Cmp(big.NewFloat(0.5000001)) > 0 {
		return "PMT more than half a cent from the closed formula"
	}

	rate := new(big.Rat)
	rate.SetString(in.InterestRate.String())
	balance := s.PrincipalCents
	for k := 1; k <= n; k++ {
		b := s.Bills[k]
		if b.Type != BillTypeInstallment || b.Details.DownPaymentCents != 0 || b.Details.RegistrationFeeCents != 0 {
			return "installment has down-payment details"
		}
		if k < n && b.AmountCents != pmt {
			return "installment other than the last ≠ PMT"
		}
		if b.Details.InterestCents != schedHalfUp(new(big.Rat).Mul(big.NewRat(balance, 1), rate)) {
			return "interest is not the rounded balance × rate"
		}
		balance -= b.Details.AmortizationCents
		local := b.DueDate.In(SaoPaulo)
		h, m, sec := local.Clock()
		y, mon, _ := local.Date()
		if h != 23 || m != 59 || sec != 59 || local.Nanosecond() != 999_000_000 {
			return "installment not due at 23:59:59.999 São Paulo"
		}
		if local.Day() != min(in.DueDay, daysIn(y, mon)) {
			return "installment not due on the (clamped) due day"
		}
	}
	if balance != 0 {
		return "balance not settled"
	}
	return ""
}

func TestScheduledBillEffectiveDueDate(t *testing.T) {
	// Charged Friday 2026-11-20 (a holiday) at 10:00 with 24 h to pay: the
	// first bill is late the moment its payment expires, Saturday 10:00,
	// weekend or not. Installment 1 falls on Sunday 2026-12-20 and is late
	// only after Monday the 21st.
	s, err := BuildSchedule(ScheduleInput{AmountCents: 100000, DownPaymentType: DownPaymentPercentage, DownPaymentValue: MustRate("0.2"),
		InterestRate: MustRate("0.01"), Installments: 3, DueDay: 20, ChargedAt: time.Date(2026, 11, 20, 10, 0, 0, 0, SaoPaulo), ExpiresIn: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Bills[0].EffectiveDueDate(), time.Date(2026, 11, 21, 10, 0, 0, 0, SaoPaulo); !got.Equal(want) {
		t.Errorf("first bill effective due %v, want %v", got, want)
	}
	if got, want := s.Bills[1].EffectiveDueDate(), time.Date(2026, 12, 21, 23, 59, 59, 999e6, SaoPaulo); !got.Equal(want) {
		t.Errorf("installment effective due %v, want %v", got, want)
	}
}
