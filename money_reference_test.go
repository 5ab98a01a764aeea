package parcela

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// An independent reference for the money math: exact rationals (math/big)
// written from the definitions in docs/design.md's "Money" section, never
// calling the code it checks.

// refRound rounds r half-up (away from zero) to an integer.
func refRound(r *big.Rat) *big.Int {
	num, den := new(big.Int).Abs(r.Num()), r.Denom()
	twice := new(big.Int).Add(new(big.Int).Mul(num, big.NewInt(2)), den)
	q := twice.Quo(twice, new(big.Int).Mul(den, big.NewInt(2)))
	if r.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

// refHalfDistance is how far r's fractional part is from one half.
func refHalfDistance(r *big.Rat) *big.Rat {
	frac := new(big.Rat).Sub(r, new(big.Rat).SetInt(new(big.Int).Quo(r.Num(), r.Denom())))
	d := frac.Sub(frac, big.NewRat(1, 2))
	return d.Abs(d)
}

func refRat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func refPow(x *big.Rat, n int) *big.Rat {
	out := big.NewRat(1, 1)
	for range n {
		out.Mul(out, x)
	}
	return out
}

// refRoot30 is y^(1/30) to about 400 bits, by Newton's method on big.Float.
func refRoot30(y *big.Rat) *big.Rat {
	const prec = 800
	yf := new(big.Float).SetPrec(prec).SetRat(y)
	yApprox, _ := y.Float64()
	x := new(big.Float).SetPrec(prec).SetFloat64(math.Pow(yApprox, 1.0/30)) // Newton's start
	thirty := new(big.Float).SetPrec(prec).SetInt64(30)
	for range 400 {
		// x ← x − (x^30 − y)/(30·x^29)
		p29 := new(big.Float).SetPrec(prec).SetFloat64(1)
		for range 29 {
			p29.Mul(p29, x)
		}
		p30 := new(big.Float).SetPrec(prec).Mul(p29, x)
		num := p30.Sub(p30, yf)
		den := p29.Mul(p29, thirty)
		step := num.Quo(num, den)
		x.Sub(x, step)
		if step.Sign() == 0 || step.MantExp(nil)-x.MantExp(nil) < -500 {
			break
		}
	}
	r, _ := x.Rat(nil)
	return r
}

// refDate is a São Paulo calendar date as a UTC midnight.
func refDate(t time.Time) time.Time {
	y, m, d := t.In(SaoPaulo).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// refDaysBetween counts calendar dates one at a time.
func refDaysBetween(a, b time.Time) int64 {
	return refDaysBetweenDates(refDate(a), refDate(b))
}

// refDaysBetweenDates counts the days between two UTC midnights.
func refDaysBetweenDates(da, db time.Time) int64 {
	var n int64
	for da.Before(db) {
		da = da.AddDate(0, 0, 1)
		n++
	}
	for db.Before(da) {
		db = db.AddDate(0, 0, 1)
		n--
	}
	return n
}

func refLastDay(y int, m time.Month) int {
	for d := 31; ; d-- {
		if time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Month() == m {
			return d
		}
	}
}

// refAddMonths is date's month plus k, on day, clamped to that month's end.
func refAddMonths(date time.Time, k, day int) time.Time {
	y, m := date.Year(), int(date.Month())-1+k
	y, m = y+m/12, m%12
	mo := time.Month(m + 1)
	return time.Date(y, mo, min(day, refLastDay(y, mo)), 0, 0, 0, 0, time.UTC)
}

// refInstallmentDates are the due dates of installments 1..n: the first
// due_day on or after one month from the down payment's date (clamped to
// the month's end), then monthly.
func refInstallmentDates(downDue time.Time, dueDay, n int) []time.Time {
	d := refDate(downDue)
	oneMonth := refAddMonths(d, 1, d.Day())
	first := refAddMonths(oneMonth, 0, dueDay)
	if first.Before(oneMonth) {
		first = refAddMonths(oneMonth, 1, dueDay)
	}
	out := make([]time.Time, n)
	for k := range n {
		out[k] = refAddMonths(first, k, dueDay)
	}
	return out
}

type refPlan struct {
	fee, down, principal *big.Int
	pmt                  *big.Int
	pmtExact             *big.Rat
	amort, interest      []*big.Int
	dates                []time.Time
	days                 int64
	daysTo               []int64 // from the charge: [0] the down payment's, [k] installment k's
}

// uneven tells whether the plan's last installment is further from its
// PMT than the definition allows: two cents an installment, or 1% of the
// PMT (rounded down), either way.
func (p refPlan) uneven() bool {
	n := len(p.amort)
	if n == 0 {
		return false
	}
	last := new(big.Int).Add(p.amort[n-1], p.interest[n-1])
	drift := new(big.Int).Abs(new(big.Int).Sub(last, p.pmt))
	bound := big.NewInt(2 * int64(n))
	if onePercent := new(big.Int).Quo(p.pmt, big.NewInt(100)); onePercent.Cmp(bound) > 0 {
		bound = onePercent
	}
	return drift.Cmp(bound) > 0
}

// refSchedule is the definition's plan of in (financed).
func refSchedule(in ScheduleInput, rate, feeRate, downValue *big.Rat) refPlan {
	amount := big.NewRat(in.AmountCents, 1)
	var p refPlan
	p.fee = refRound(new(big.Rat).Mul(amount, feeRate))
	if in.DownPaymentType == DownPaymentPercentage {
		p.down = refRound(new(big.Rat).Mul(amount, downValue))
	} else {
		p.down = new(big.Int).Set(downValue.Num())
	}
	p.principal = new(big.Int).Sub(big.NewInt(in.AmountCents), p.down)
	n := in.Installments - 1
	downDue := in.ChargedAt.Add(in.ExpiresIn)
	p.dates = refInstallmentDates(downDue, in.DueDay, n)
	p.daysTo = []int64{refDaysBetween(in.ChargedAt, downDue)}
	for _, d := range p.dates {
		p.daysTo = append(p.daysTo, refDaysBetweenDates(refDate(in.ChargedAt), d))
	}
	p.days = p.daysTo[1]
	P := new(big.Rat).SetInt(p.principal)
	onePlusI := new(big.Rat).Add(big.NewRat(1, 1), rate)
	// The principal carried to one month before installment 1: P·(1+i)^(d/30−1).
	var factor *big.Rat
	switch {
	case rate.Sign() == 0 || p.days == 30:
		factor = big.NewRat(1, 1)
	case p.days%30 == 0: // a whole number of months: exact
		factor = refPow(onePlusI, int(p.days/30-1))
	case p.days > 30:
		factor = refRoot30(refPow(onePlusI, int(p.days-30)))
	default:
		factor = refRoot30(new(big.Rat).Inv(refPow(onePlusI, int(30-p.days))))
	}
	carried := new(big.Rat).Mul(P, factor)
	if rate.Sign() == 0 {
		p.pmtExact = new(big.Rat).Quo(P, big.NewRat(int64(n), 1))
	} else {
		f := refPow(onePlusI, n)
		num := new(big.Rat).Mul(carried, rate)
		num.Mul(num, f)
		p.pmtExact = num.Quo(num, new(big.Rat).Sub(f, big.NewRat(1, 1)))
	}
	p.pmt = refRound(p.pmtExact)
	// Interest first, the rest amortizes; unpaid interest is owed on; the
	// last installment settles what is left.
	left, unpaid := new(big.Int).Set(p.principal), new(big.Int)
	for k := 1; k <= n; k++ {
		var owed *big.Int
		if k == 1 {
			owed = refRound(new(big.Rat).Sub(new(big.Rat).Mul(carried, onePlusI), P))
		} else {
			balance := new(big.Rat).SetInt(new(big.Int).Add(left, unpaid))
			owed = new(big.Int).Add(unpaid, refRound(balance.Mul(balance, rate)))
		}
		interest := new(big.Int).Set(owed)
		if interest.Cmp(p.pmt) > 0 {
			interest.Set(p.pmt)
		}
		amort := new(big.Int).Sub(p.pmt, interest)
		if k == n {
			interest, amort = new(big.Int).Set(owed), new(big.Int).Set(left)
		}
		left.Sub(left, amort)
		unpaid = new(big.Int).Sub(owed, interest)
		p.amort, p.interest = append(p.amort, amort), append(p.interest, interest)
	}
	return p
}

// refCET solves Σ F/(1+CET)^(d/365) = principal by bisection on the daily
// rate x, (1+CET) = (1+x)^365, and returns CET exactly as a rational with
// how far it is from a rounding boundary of CETPlaces places. ok is false
// when the root is beyond 10,000,000% a year.
func refCET(principal *big.Int, days []int64, cents []*big.Int) (cet *big.Rat, ok bool) {
	const prec = 400
	P := new(big.Float).SetPrec(prec).SetInt(principal)
	value := func(x *big.Float) *big.Float {
		base := new(big.Float).SetPrec(prec).Add(big.NewFloat(1), x)
		sum := new(big.Float).SetPrec(prec)
		for j, d := range days {
			pw := new(big.Float).SetPrec(prec).SetFloat64(1)
			b := new(big.Float).SetPrec(prec).Set(base)
			for e := d; e > 0; e >>= 1 {
				if e&1 == 1 {
					pw.Mul(pw, b)
				}
				b.Mul(b, b)
			}
			term := new(big.Float).SetPrec(prec).SetInt(cents[j])
			sum.Add(sum, term.Quo(term, pw))
		}
		return sum
	}
	annual := func(x *big.Float) *big.Float {
		base := new(big.Float).SetPrec(prec).Add(big.NewFloat(1), x)
		pw := new(big.Float).SetPrec(prec).SetFloat64(1)
		for range 365 {
			pw.Mul(pw, base)
		}
		return pw.Sub(pw, big.NewFloat(1))
	}
	lo, hi := new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec).SetFloat64(0.04)
	if value(lo).Cmp(P) < 0 {
		return nil, false
	}
	for range 300 {
		mid := new(big.Float).SetPrec(prec).Add(lo, hi)
		mid.Quo(mid, big.NewFloat(2))
		if value(mid).Cmp(P) >= 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	c, _ := annual(lo).Rat(nil)
	return c, c.Cmp(big.NewRat(100000, 1)) <= 0
}

// refRoundPlaces rounds r half-up to places decimals.
func refRoundPlaces(r *big.Rat, places int) *big.Rat {
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil))
	q := refRound(new(big.Rat).Mul(r, scale))
	return new(big.Rat).Quo(new(big.Rat).SetInt(q), scale)
}

// refNearCETBoundary reports whether the CET is too near a rounding
// boundary of CETPlaces places for the bisection to decide it.
func refNearCETBoundary(r *big.Rat) bool {
	scaled := new(big.Rat).Mul(r, big.NewRat(1_000_000, 1))
	return refHalfDistance(scaled).Cmp(big.NewRat(1, 1_000_000_000_000)) < 0
}

type refCase struct {
	amount   int64
	rate     string
	fee      string
	downType DownPaymentType
	down     string
	n        int
	dueDay   int
	charged  time.Time
	expires  time.Duration
}

func (c refCase) String() string {
	return fmt.Sprintf("amount %d rate %s fee %s down %s %s n %d due_day %d charged %s expires %s",
		c.amount, c.rate, c.fee, c.downType, c.down, c.n, c.dueDay, c.charged.Format(time.RFC3339), c.expires)
}

// checkAgainstReference compares BuildSchedule with the reference for c.
func checkAgainstReference(t *testing.T, c refCase) {
	t.Helper()
	in := ScheduleInput{AmountCents: c.amount, DownPaymentType: c.downType, DownPaymentValue: MustRate(c.down),
		RegistrationFee: MustRate(c.fee), InterestRate: MustRate(c.rate), Installments: c.n, DueDay: c.dueDay,
		ChargedAt: c.charged, ExpiresIn: c.expires}
	ref := refSchedule(in, refRat(c.rate), refRat(c.fee), refRat(c.down))
	n := c.n - 1

	// Is the reference plan chargeable: every bill in [1, MaxAmountCents]?
	maxCents := big.NewInt(MaxAmountCents)
	chargeable := ref.principal.Sign() >= 0 && new(big.Int).Add(ref.down, ref.fee).Sign() > 0 &&
		new(big.Int).Add(ref.down, ref.fee).Cmp(maxCents) <= 0
	amortSum := new(big.Int)
	for k := range n {
		bill := new(big.Int).Add(ref.amort[k], ref.interest[k])
		if bill.Sign() < 1 || bill.Cmp(maxCents) > 0 || ref.amort[k].Sign() < 0 || ref.interest[k].Sign() < 0 {
			chargeable = false
		}
		amortSum.Add(amortSum, ref.amort[k])
	}
	if n > 0 && ref.uneven() {
		chargeable = false
	}

	s, err := BuildSchedule(in)
	if err != nil {
		if chargeable {
			// Refused only for a CET beyond the maximum.
			days, cents := refFlows(ref)
			if _, ok := refCET(ref.principal, days, cents); ok {
				t.Errorf("%s: refused (%v), but every bill of the definition's plan is chargeable", c, err)
			}
		}
		return
	}
	if !chargeable {
		t.Errorf("%s: charged, but the definition's plan has a bill outside [1, %d]", c, int64(MaxAmountCents))
		return
	}
	if refHalfDistance(ref.pmtExact).Cmp(big.NewRat(1, 1_000_000_000_000)) > 0 && s.InstallmentCents != ref.pmt.Int64() {
		t.Errorf("%s: PMT %d, the definition's %d (exact %s)", c, s.InstallmentCents, ref.pmt, ref.pmtExact.FloatString(12))
		return
	}
	if s.FirstPeriodDays != ref.days {
		t.Errorf("%s: first period %d days, the definition's %d", c, s.FirstPeriodDays, ref.days)
	}
	// Parts sum to wholes.
	var total, interest, amort int64
	for _, b := range s.Bills {
		d := b.Details
		if b.AmountCents != d.DownPaymentCents+d.RegistrationFeeCents+d.AmortizationCents+d.InterestCents {
			t.Errorf("%s: bill %d of %d cents, parts %+v", c, b.Number, b.AmountCents, d)
		}
		if b.AmountCents < 1 || d.AmortizationCents < 0 || d.InterestCents < 0 {
			t.Errorf("%s: bill %d of %d cents, parts %+v", c, b.Number, b.AmountCents, d)
		}
		total += b.AmountCents
		interest += d.InterestCents
		amort += d.AmortizationCents
	}
	if total != s.TotalCents || total != s.DownPaymentCents+s.RegistrationFeeCents+s.PrincipalCents+interest ||
		interest != s.TotalInterestCents || amort != s.PrincipalCents || s.DownPaymentCents+s.PrincipalCents != c.amount {
		t.Errorf("%s: totals do not add up: %+v", c, s)
	}
	if s.DownPaymentCents != ref.down.Int64() || s.RegistrationFeeCents != ref.fee.Int64() {
		t.Errorf("%s: down payment %d fee %d, the definition's %d and %d", c, s.DownPaymentCents, s.RegistrationFeeCents, ref.down, ref.fee)
	}
	for k := 1; k <= n; k++ {
		b := s.Bills[k]
		if got := refDate(b.DueDate); !got.Equal(ref.dates[k-1]) {
			t.Errorf("%s: installment %d due %s, the definition's %s", c, k, got.Format(time.DateOnly), ref.dates[k-1].Format(time.DateOnly))
			return
		}
		if b.Details.AmortizationCents != ref.amort[k-1].Int64() || b.Details.InterestCents != ref.interest[k-1].Int64() {
			t.Errorf("%s: installment %d parts %+v, the definition's amortization %d interest %d", c, k, b.Details, ref.amort[k-1], ref.interest[k-1])
			return
		}
	}
	// The CET shown is its definition rounded to CETPlaces.
	if s.PrincipalCents == 0 {
		return
	}
	days, cents := refFlows(ref)
	cet, ok := refCET(ref.principal, days, cents)
	if !ok {
		t.Errorf("%s: CET %v shown, the definition's is beyond the maximum", c, s.CETAnnualRate)
		return
	}
	if s.CETAnnualRate == nil {
		t.Errorf("%s: no CET shown", c)
		return
	}
	if interest == 0 && s.RegistrationFeeCents == 0 && !s.CETAnnualRate.IsZero() {
		t.Errorf("%s: CET %s with no interest and no fee", c, s.CETAnnualRate)
	}
	if refNearCETBoundary(cet) {
		return
	}
	want := refRoundPlaces(cet, CETPlaces)
	if got := refRat(s.CETAnnualRate.String()); got.Cmp(want) != 0 {
		t.Errorf("%s: CET %s, the definition's %s (exact %s)", c, s.CETAnnualRate, want.FloatString(CETPlaces), cet.FloatString(15))
	}
}

// refFlows are the credit's flows: the fee on the down payment's date,
// each installment on its date (days from the charge).
func refFlows(ref refPlan) ([]int64, []*big.Int) {
	var days []int64
	var cents []*big.Int
	if ref.fee.Sign() > 0 {
		days, cents = append(days, ref.daysTo[0]), append(cents, ref.fee)
	}
	for k := range ref.amort {
		days = append(days, ref.daysTo[k+1])
		cents = append(cents, new(big.Int).Add(ref.amort[k], ref.interest[k]))
	}
	return days, cents
}

func TestMoneyMatchesTheReference(t *testing.T) {
	t.Parallel()
	rates := []string{"0", "0.000001", "0.0099", "0.0299", "0.05", "0.1", "0.25", "0.5", "0.999999", "1"}
	fees := []string{"0", "0.01", "0.1", "1"}
	amounts := []int64{2, 5000, 100_000, 123_457, 99_999_999, 1_000_000_001, MaxAmountCents}
	charges := []time.Time{
		time.Date(2028, 2, 29, 10, 0, 0, 0, SaoPaulo),
		time.Date(2027, 1, 31, 23, 30, 0, 0, SaoPaulo),
		time.Date(2026, 12, 31, 0, 5, 0, 0, SaoPaulo),
		time.Date(2027, 3, 31, 12, 0, 0, 0, SaoPaulo),
		time.Date(2028, 1, 30, 18, 0, 0, 0, SaoPaulo),
		time.Date(2027, 2, 28, 9, 0, 0, 0, SaoPaulo),
	}
	rng := rand.New(rand.NewPCG(8, 12))
	count := 300
	if testing.Short() {
		count = 60
	}
	for range count {
		c := refCase{
			amount:  amounts[rng.IntN(len(amounts))],
			rate:    rates[rng.IntN(len(rates))],
			fee:     fees[rng.IntN(len(fees))],
			n:       2 + rng.IntN(119),
			dueDay:  1 + rng.IntN(31),
			charged: charges[rng.IntN(len(charges))],
			expires: time.Duration(rng.IntN(4)*24) * time.Hour,
		}
		if rng.IntN(5) == 0 {
			c.amount = 1 + rng.Int64N(MaxAmountCents)
		}
		if rng.IntN(2) == 0 {
			c.downType, c.down = DownPaymentPercentage, []string{"0", "0.000001", "0.1", "0.5", "0.999999", "1"}[rng.IntN(6)]
		} else {
			c.downType = DownPaymentAbsolute
			c.down = fmt.Sprint([]int64{0, 1, c.amount / 3, c.amount - 1, c.amount}[rng.IntN(5)])
		}
		checkAgainstReference(t, c)
		if t.Failed() {
			return
		}
	}
}

// TestLatePenaltyMatchesTheContract: past its effective due date (or a
// later waiver), the fine once, and the monthly rate / 30 per São Paulo
// calendar day since its due date (or a later waiver) on the original
// amount, each rounded half-up, at month ends, leap days, weekends and
// across years.
func TestLatePenaltyMatchesTheContract(t *testing.T) {
	t.Parallel()
	dues := []time.Time{
		time.Date(2028, 2, 28, 23, 59, 59, 999_000_000, SaoPaulo),
		time.Date(2028, 2, 29, 23, 59, 59, 999_000_000, SaoPaulo),
		time.Date(2027, 2, 28, 23, 59, 59, 999_000_000, SaoPaulo),
		time.Date(2027, 1, 31, 23, 59, 59, 999_000_000, SaoPaulo),
		time.Date(2026, 12, 31, 23, 59, 59, 999_000_000, SaoPaulo),
		time.Date(2027, 4, 30, 14, 0, 0, 0, SaoPaulo),
		time.Date(2018, 11, 3, 23, 59, 59, 999_000_000, SaoPaulo), // the eve of daylight saving's first day
	}
	fines := []string{"0", "0.000001", "0.02", "0.019999"}
	rates := []string{"0", "0.000001", "0.01", "0.003333", "0.009999"}
	amounts := []int64{1, 15, 5000, 123_457, 1_000_000_001, MaxAmountCents}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 5000 {
		due := dues[rng.IntN(len(dues))]
		now := due.Add(time.Duration(rng.Int64N(int64(800 * 24 * time.Hour))))
		if rng.IntN(4) == 0 { // just before or after the due instant
			now = due.Add(time.Duration(rng.Int64N(int64(2*time.Hour))) - time.Hour)
		}
		var waiver *time.Time
		if rng.IntN(4) == 0 {
			w := due.Add(time.Duration(rng.Int64N(int64(40 * 24 * time.Hour))))
			waiver = &w
		}
		fine, rate, amount := fines[rng.IntN(len(fines))], rates[rng.IntN(len(rates))], amounts[rng.IntN(len(amounts))]
		eff := EffectiveDueDate(due)
		got := LatePenalty(amount, due, eff, waiver, now, MustRate(fine), MustRate(rate))

		threshold, from := eff, due
		if waiver != nil && waiver.After(eff) {
			threshold = *waiver
		}
		if waiver != nil && waiver.After(due) {
			from = *waiver
		}
		var want Penalty
		if now.After(threshold) {
			days := refDaysBetween(from, now)
			orig := big.NewRat(amount, 1)
			want = Penalty{
				FineCents:     refRound(new(big.Rat).Mul(orig, refRat(fine))).Int64(),
				InterestCents: refRound(new(big.Rat).Mul(new(big.Rat).Mul(orig, refRat(rate)), big.NewRat(days, 30))).Int64(),
				DaysLate:      days,
			}
		}
		if got != want {
			t.Fatalf("%d cents due %s (waiver %v), at %s, fine %s, interest %s: %+v, the contract's %+v",
				amount, due.Format(time.RFC3339Nano), waiver, now.Format(time.RFC3339Nano), fine, rate, got, want)
		}
	}
}

// TestCardInstallmentsSumToTheAmount: equal cents, the leftover on the
// last, none of 0 cents within CardInstallmentLimit, at every amount up to
// the largest.
func TestCardInstallmentsSumToTheAmount(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	max := MaxCardInstallments
	for range 20000 {
		total := []int64{1, 2, 11, 12, 13, MaxAmountCents, MaxAmountCents - 1, 1 + rng.Int64N(MaxAmountCents)}[rng.IntN(8)]
		bill := &Bill{Type: BillTypeDownPayment}
		pc := &PaymentConfiguration{PaymentType: Financed, MaxInstallments: MaxInstallments}
		n := 1 + rng.IntN(CardInstallmentLimit(bill, pc, &Company{MaxInstallments: MaxInstallments}, total))
		if n > max {
			t.Fatalf("%d installments of %d cents allowed, past %d", n, total, max)
		}
		parts := CardInstallmentAmounts(total, n)
		var sum int64
		for i, p := range parts {
			if p < 1 {
				t.Fatalf("%d cents in %d: installment %d of %d cents", total, n, i+1, p)
			}
			if i < n-1 && p != total/int64(n) {
				t.Fatalf("%d cents in %d: installment %d of %d cents", total, n, i+1, p)
			}
			sum += p
		}
		if sum != total {
			t.Fatalf("%d cents in %d installments sum to %d", total, n, sum)
		}
	}
}
