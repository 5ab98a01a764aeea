package parcela

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/shopspring/decimal"
)

var one = decimal.NewFromInt(1)

// powPrecision bounds the decimal places kept while raising (1+i) to n; 60
// keeps the PMT exact to far below a cent for any amount a boleto carries.
const powPrecision = 60

// prorataPlaces is the precision of (1+i)^(d/30 − 1): on at most
// MaxAmountCents it is exact to 10⁻²⁰ of a cent.
const prorataPlaces = 30

// PriceInstallment returns the Price-table installment PMT = P·i / (1 − (1+i)^−n),
// or P/n when i is 0, rounded half-up to the cent. It is 0 when n < 1.
func PriceInstallment(principalCents int64, monthlyRate Rate, n int) int64 {
	if n < 1 {
		return 0
	}
	return RoundCents(pricePMT(decimal.NewFromInt(principalCents), monthlyRate.Decimal(), n))
}

// pricePMT is the exact PMT of p over n ≥ 1 months at i.
func pricePMT(p, i decimal.Decimal, n int) decimal.Decimal {
	if i.IsZero() {
		return p.DivRound(decimal.NewFromInt(int64(n)), powPrecision)
	}
	// P·i/(1 − f^−1) = P·i·f/(f − 1) with f = (1+i)^n, which avoids a
	// second inexact division.
	f := powTruncated(one.Add(i), n)
	if f.Cmp(one) <= 0 { // only for a rate below 10⁻⁶⁰, which validation refuses
		return p.DivRound(decimal.NewFromInt(int64(n)), powPrecision)
	}
	return p.Mul(i).Mul(f).DivRound(f.Sub(one), powPrecision)
}

// powTruncated computes x^n by repeated squaring, truncating each product
// to powPrecision places so the digits stay bounded for long plans.
func powTruncated(x decimal.Decimal, n int) decimal.Decimal {
	result := one
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			result = result.Mul(x).Truncate(powPrecision)
		}
		x = x.Mul(x).Truncate(powPrecision)
	}
	return result
}

// prorataFactor is (1+i)^(d/30 − 1): the principal P carried to one month
// before an installment due d days after the charge is P times it. It is the
// 30th root of (1+i)^(d−30), an exact integer power, taken to prorataPlaces.
func prorataFactor(i decimal.Decimal, days int64) decimal.Decimal {
	if i.IsZero() || days == 30 {
		return one
	}
	base := one.Add(i)
	var x decimal.Decimal
	if days > 30 {
		x = powTruncated(base, int(days-30))
	} else {
		x = one.DivRound(powTruncated(base, int(30-days)), powPrecision)
	}
	root, err := x.RootRound(30, prorataPlaces)
	if err != nil { // RootRound fails only on negative input; x > 0
		return one
	}
	return root
}

// priceAmounts are a Price table's rounded PMT and each installment's parts.
type priceAmounts struct {
	pmt   int64
	parts []BillDetails
}

// priceTable splits principal into n installments at monthly rate i, the
// first due days after the charge. The table runs on the principal carried
// to one month before installment 1, P·(1+i)^(d/30 − 1), so each installment
// is the same PMT; their parts are in terms of P:
//
//   - installment 1 owes the interest of its d days, P·((1+i)^(d/30) − 1);
//   - each later one owes the balance × i, the balance being what is left of
//     P plus any interest a previous installment did not cover (a first
//     period of two months can cost more than one PMT);
//   - each installment pays interest first, the rest amortizes P;
//   - the last one amortizes what is left of P, so the amortizations sum to
//     P exactly and the last amount absorbs every rounding.
//
// Each interest is rounded half-up to the cent on its own.
func priceTable(principal int64, rate Rate, n int, days int64) (priceAmounts, error) {
	return priceTableOf(principal, rate, rate.Decimal().String(), n, days)
}

// priceTableOf is priceTable given rateText, the rate's decimal text.
func priceTableOf(principal int64, rate Rate, rateText string, n int, days int64) (priceAmounts, error) {
	key := priceKey{principal, rateText, rate.unbounded, n, days}
	if t, hit := priceTables.get(key); hit {
		return priceAmounts{pmt: t.pmt, parts: slices.Clone(t.parts)}, t.err
	}
	t, err := priceTableCarried(principal, rate, n, prorataFactor(rate.Decimal(), days))
	priceTables.put(key, priceTableResult{t, err})
	return priceAmounts{pmt: t.pmt, parts: slices.Clone(t.parts)}, err
}

// priceKey is everything a price table depends on.
type priceKey struct {
	principal int64
	rate      string
	unbounded bool
	n         int
	days      int64
}

type priceTableResult struct {
	priceAmounts
	err error
}

// priceTables remembers the tables computed: the offer page builds one per
// count of installments on every view, in decimals.
var priceTables = newMemo[priceKey, priceTableResult](4096)

// priceTableCarried is priceTable given the pro rata factor (prorataFactor).
func priceTableCarried(principal int64, rate Rate, n int, factor decimal.Decimal) (priceAmounts, error) {
	out, err := priceTableUnlevelled(principal, rate, n, factor)
	if err != nil || n < 1 {
		return out, err
	}
	last := out.parts[n-1].AmortizationCents + out.parts[n-1].InterestCents
	if d := last - out.pmt; d > maxLastDrift(out.pmt, n) || -d > maxLastDrift(out.pmt, n) {
		return priceAmounts{}, unevenPlan(n, out.pmt, last)
	}
	return out, nil
}

// priceTableUnlevelled is priceTableCarried without the level bound on the
// last installment (planCostWithinMax prices a calendar no charge may have).
func priceTableUnlevelled(principal int64, rate Rate, n int, factor decimal.Decimal) (priceAmounts, error) {
	i := rate.Decimal()
	p := decimal.NewFromInt(principal)
	carried := p.Mul(factor)
	pmt, err := centsOf(pricePMT(carried, i, n).Round(0))
	if err != nil {
		return priceAmounts{}, err
	}
	firstInterest, err := centsOf(carried.Mul(one.Add(i)).Sub(p).Round(0))
	if err != nil {
		return priceAmounts{}, err
	}
	interestOn := centsTimes(rate)
	out := priceAmounts{pmt: pmt, parts: make([]BillDetails, 0, n)}
	left, unpaid := principal, int64(0) // what is left of P, and interest owed beyond what was paid
	for k := 1; k <= n; k++ {
		owed := firstInterest
		if k > 1 {
			// The PMT is rounded to the cent, and at high rates over long
			// plans the half cent grows by (1+i) every month (doubling at
			// 100% a month); sumCents stops it long before int64 would wrap.
			balance, err := sumCents(left, unpaid)
			if err != nil {
				return priceAmounts{}, err
			}
			if owed, err = sumCents(unpaid, interestOn(balance)); err != nil {
				return priceAmounts{}, err
			}
		}
		interest := min(owed, pmt)
		amortization := pmt - interest
		if k == n {
			interest, amortization = owed, left
		}
		if amortization > left {
			// The rounded PMT would repay more than was lent: the last
			// installment would be at most 0, a PMT away from the others.
			// Of a PMT of a few cents (a principal of a few cents an
			// installment) that is within maxLastDrift; of any other, it
			// is the rounding grown past the last installment (below).
			if pmt <= maxLastDrift(pmt, n) {
				return priceAmounts{}, Errorf(EINVALID, "principal of %d cents is too small for %d installments", principal, n)
			}
			return priceAmounts{}, unevenPlan(n, pmt, 0)
		}
		left, unpaid = left-amortization, owed-interest
		out.parts = append(out.parts, BillDetails{AmortizationCents: amortization, InterestCents: interest})
	}
	return out, nil
}

// errUnevenPlan is the cause of unevenPlan's error, for checkPlans.
var errUnevenPlan = errors.New("the last installment is not level with the others")

// maxLastDrift is how far a Price table's last installment may be from its
// PMT: two cents an installment, or 1% of the PMT. Every installment's
// rounding to the cent (the PMT's and each interest's, half a cent each)
// reaches the last one grown by (1+i) a month, and at a high rate over a
// long plan that is no longer a level installment (at 10% a month over 119,
// 41% more than the others; at 7.78% over 45 of R$ 5,11, R$ 3,90): not the
// table that was sold, so it is refused, and checkPlans caps
// max_installments below it. At zero interest the drift is under half a
// cent an installment, and a plan of up to 24 installments at up to 5% a
// month stays within the bound (TestLevelPlansAreNeverUneven).
func maxLastDrift(pmt int64, n int) int64 { return max(2*int64(n), pmt/100) }

// unevenPlan is the error of a table whose last installment (last, or 0
// where it would repay more than is left) is too far from its pmt.
func unevenPlan(n int, pmt, last int64) *Error {
	msg := fmt.Sprintf("at this interest rate, rounding %d monthly installments of %d cents to the cent grows into the last one, which would be %d cents: choose fewer installments", n, pmt, last)
	if last == 0 {
		msg = fmt.Sprintf("at this interest rate, rounding %d monthly installments of %d cents to the cent grows past the last one: choose fewer installments", n, pmt)
	}
	return &Error{Code: EINVALID, Message: msg, Cause: errUnevenPlan}
}

// centsTimes returns cents ↦ cents × r rounded half-up, the same as
// r.MulCents. A rate of at most RatePlaces places (every validated rate) is
// r = micros/10⁶, and non-negative cents × micros is exact in 128 bits, so
// the table's many multiplications need no decimal; anything else goes
// through MulCents.
func centsTimes(r Rate) func(int64) int64 {
	if r.IsNegative() || r.Places() > RatePlaces || r.Decimal().GreaterThan(one) {
		return r.MulCents
	}
	micros := uint64(r.Decimal().Shift(RatePlaces).IntPart())
	return func(cents int64) int64 {
		if cents < 0 {
			return r.MulCents(cents)
		}
		hi, lo := bits.Mul64(uint64(cents), micros)
		lo, carry := bits.Add64(lo, 500_000, 0) // half a unit, for half-up
		hi += carry
		if hi >= 1_000_000 { // the quotient would not fit in 64 bits
			return r.MulCents(cents)
		}
		q, _ := bits.Div64(hi, lo, 1_000_000)
		if q > math.MaxInt64 {
			return r.MulCents(cents)
		}
		return int64(q)
	}
}
