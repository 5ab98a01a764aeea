package parcela

import (
	"cmp"
	"encoding/binary"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// Cost is what a plan discloses of the credit it grants (CDC art. 52):
// what the customer pays in all, how much of it is interest, and the CET.
type Cost struct {
	TotalPayableCents  int64
	TotalInterestCents int64
	// CETAnnualRate is the custo efetivo total: the effective annual rate
	// of the credit's cash flows (see CostOf), to CETPlaces places. Nil
	// when nothing is financed (upfront plans, or no principal).
	CETAnnualRate *Rate
}

// CETPlaces is how many decimal places the CET is given with: 0.426380 is
// 42.6380% a year.
const CETPlaces = 6

// Cost is the schedule's cost disclosure, for Billing.Disclosed.
func (s Schedule) Cost() Cost {
	return Cost{TotalPayableCents: s.TotalCents, TotalInterestCents: s.TotalInterestCents, CETAnnualRate: s.CETAnnualRate}
}

// CostOf discloses the cost of a plan charged at chargedAt with bills (a
// down payment and its installments, in any order).
//
// The CET is the internal rate of return of the credit's cash flows,
// annualised by the Banco Central's formula (Resolução CMN 3.517/2007):
//
//	Σ FCj / (1+CET)^(dj/365) = FC0
//
// FC0, the credit, is the principal (the price less the down payment),
// received at the charge. The down payment is the part of the price paid in
// cash, so it is no flow, but the registration fee billed with it is a cost
// of the credit: it is paid on the down payment's due date. Each
// installment is paid on its due date. dj counts São Paulo calendar days
// from the charge. Solving for the daily rate x = (1+CET)^(1/365) − 1 makes
// the left side a sum of integer powers of 1/(1+x), computed in exact
// decimals (see solveDailyRate), and CET = (1+x)^365 − 1, rounded half-up
// to CETPlaces places.
func CostOf(chargedAt time.Time, bills []ScheduledBill) (Cost, error) {
	return costOf(bills, func(i int) int64 { return calendarDaysBetween(chargedAt, bills[i].DueDate) })
}

// costOf is CostOf given days(i), the calendar days from the charge to
// bill i's due date.
func costOf(bills []ScheduledBill, days func(i int) int64) (Cost, error) {
	c, principal, flows, err := costFlows(bills, days)
	if err != nil || principal <= 0 {
		return c, err
	}
	cet, ok := cetOf(principal, flows)
	if !ok {
		return Cost{}, errCETOverMax()
	}
	c.CETAnnualRate = &cet
	return c, nil
}

// checkCost is costOf's error alone. Most plans' CET need not be found
// for it: its bound decides (cetWithinMax).
func checkCost(bills []ScheduledBill, days func(i int) int64) error {
	_, principal, flows, err := costFlows(bills, days)
	if err != nil || principal <= 0 {
		return err
	}
	if !cetWithinMax(principal, flows) {
		return errCETOverMax()
	}
	return nil
}

func errCETOverMax() error {
	return Errorf(EINVALID, "the plan's effective annual cost (CET) would exceed %s; lower its registration fee or interest, or finance more of the price", MaxCETAnnualRate)
}

// costFlows is costOf's disclosure but the CET, and the credit's principal
// and cash flows the CET is solved over.
func costFlows(bills []ScheduledBill, days func(i int) int64) (c Cost, principal int64, flows []cashFlow, err error) {
	for i, b := range bills {
		total, err := sumCents(c.TotalPayableCents, b.AmountCents)
		if err != nil {
			return Cost{}, 0, nil, err
		}
		interest, err := sumCents(c.TotalInterestCents, b.Details.InterestCents)
		if err != nil {
			return Cost{}, 0, nil, err
		}
		c.TotalPayableCents, c.TotalInterestCents = total, interest
		principal += b.Details.AmortizationCents
		credit := b.AmountCents - b.Details.DownPaymentCents // the fee, or the whole installment
		if credit > 0 {
			flows = append(flows, cashFlow{days: max(0, days(i)), cents: credit})
		}
	}
	return c, principal, flows, nil
}

// cetResult is the CET of a credit, or ok false when it has none within
// MaxCETAnnualRate.
type cetResult struct {
	cet Rate
	ok  bool
}

// cets remembers the CETs of the credits seen: the offer page discloses
// one per count of installments on every view, and charges of one offer's
// plan on one day lend the same principal against the same flows; each is
// a search in 30-place decimals.
var cets = newMemo[string, cetResult](4096)

// cetOf is the CET of principal lent and repaid by flows: (1+x)^365 − 1,
// x the daily rate solveDailyRate finds, rounded to CETPlaces.
func cetOf(principal int64, flows []cashFlow) (Rate, bool) {
	key := creditKey(principal, flows)
	if r, hit := cets.get(key); hit {
		return r.cet, r.ok
	}
	var r cetResult
	if x, ok := solveDailyRate(principal, flows); ok {
		r = cetResult{cet: RateFromDecimal(annualRate(x).Round(CETPlaces)), ok: true}
	}
	cets.put(key, r)
	return r.cet, r.ok
}

// creditKey is a credit's key in cets and cetBounds, its flows sorted.
func creditKey(principal int64, flows []cashFlow) string {
	slices.SortFunc(flows, func(a, b cashFlow) int { return cmp.Or(cmp.Compare(a.days, b.days), cmp.Compare(a.cents, b.cents)) })
	key := make([]byte, 0, 8+16*len(flows))
	key = binary.AppendVarint(key, principal)
	for _, f := range flows {
		key = binary.AppendVarint(binary.AppendVarint(key, f.days), f.cents)
	}
	return string(key)
}

// cetBounds remembers cetWithinMax's answers, as cets does the CETs: the
// offer page asks for every count's on every view.
var cetBounds = newMemo[string, bool](16384)

// MaxCETAnnualRate bounds the cost of credit a plan may have: 100000 is
// 10,000,000% a year, above the 409,500% of the highest interest a company
// may charge (100% a month). Only a plan whose fee is most of the credit
// comes near it; such a plan is refused rather than disclosed as a number
// of a hundred digits.
var MaxCETAnnualRate = MustRate("100000")

// maxDailyRate is the daily rate of MaxCETAnnualRate, (1+100000)^(1/365) − 1
// = 0.0320450…, rounded up: a root beyond it is beyond the maximum, one
// below it is checked by its annual rate (solveDailyRate).
var maxDailyRate = decimal.RequireFromString("0.032046")

// withinMaxDailyRate is a daily rate whose annual rate is below
// MaxCETAnnualRate ((1.032045)^365 − 1 ≈ 99,999.3): a plan whose root is
// at most it has a CET within the maximum.
var withinMaxDailyRate = decimal.RequireFromString("0.032045")

// cetWithinMax reports what cetOf's ok reports, for the most part without
// its search (a dozen sums of the flows' powers; this is one or two):
// flows worth more than principal discounted at maxDailyRate, or less
// undiscounted, have no CET within the maximum (solveDailyRate's own first
// tests), and flows worth at most principal at withinMaxDailyRate have
// their root at or below it, where every rate Newton's climb from below
// reaches is within the maximum. Only a root between the two is searched.
func cetWithinMax(principal int64, flows []cashFlow) bool {
	key := creditKey(principal, flows)
	if r, hit := cets.get(key); hit {
		return r.ok
	}
	if ok, hit := cetBounds.get(key); hit {
		return ok
	}
	ok := boundCET(principal, flows)
	cetBounds.put(key, ok)
	return ok
}

// boundCET is cetWithinMax's answer, flows sorted.
func boundCET(principal int64, flows []cashFlow) bool {
	p := decimal.NewFromInt(principal)
	if g, _ := discounted(flows, maxDailyRate); g.GreaterThan(p) {
		return false
	}
	undiscounted := decimal.Zero
	for _, f := range flows {
		undiscounted = undiscounted.Add(decimal.NewFromInt(f.cents))
	}
	if undiscounted.LessThan(p) {
		return false
	}
	if g, _ := discounted(flows, withinMaxDailyRate); g.LessThanOrEqual(p) {
		return true
	}
	_, ok := cetOf(principal, flows)
	return ok
}

// cashFlow is a payment of the customer, days after the credit.
type cashFlow struct {
	days  int64
	cents int64
}

// cetPrecision is the number of decimal places kept in the daily-rate
// search; the rate stops moving below cetTolerance, where the annual rate
// it gives moves by less than 10⁻¹², far below CETPlaces.
const cetPrecision = 30

var cetTolerance = decimal.New(1, -18)

// solveDailyRate finds the daily rate x in [0, maxDailyRate] at which the
// flows, discounted by (1+x)^days, are worth principal:
//
//	g(x) = Σ cents·(1+x)^−days − principal = 0.
//
// g falls and is convex in x (every flow is positive), and g(0), what is
// repaid less what was lent, is not negative, so Newton's method started at
// 0 climbs to the root from below without ever overshooting it. It reports
// false when the root's annual rate is beyond MaxCETAnnualRate, or when there is none: flows
// worth less than the principal undiscounted (no plan repays less than it
// lends), or flows on day 0 worth the whole principal (nothing left lent).
func solveDailyRate(principal int64, flows []cashFlow) (decimal.Decimal, bool) {
	slices.SortFunc(flows, func(a, b cashFlow) int { return cmp.Compare(a.days, b.days) })
	p := decimal.NewFromInt(principal)
	if g, _ := discounted(flows, maxDailyRate); g.GreaterThan(p) {
		return decimal.Zero, false
	}
	x := decimal.Zero
	for iteration := range 100 {
		g, slope := discounted(flows, x)
		g = g.Sub(p)
		if iteration == 0 && g.IsNegative() {
			return decimal.Zero, false
		}
		if g.Sign() <= 0 || slope.Sign() >= 0 {
			break // at the root, to the precision kept
		}
		step := g.DivRound(slope.Neg(), cetPrecision)
		x = x.Add(step)
		if step.LessThan(cetTolerance) {
			break
		}
	}
	// maxDailyRate is rounded up, so a root below it can still be a CET
	// above the maximum (up to 100034.7): the annual rate decides.
	if annualRate(x).GreaterThan(MaxCETAnnualRate.Decimal()) {
		return decimal.Zero, false
	}
	return x, true
}

// annualRate is the annual rate of daily rate x, (1+x)^365 − 1.
func annualRate(x decimal.Decimal) decimal.Decimal {
	return powTruncated(one.Add(x), 365).Sub(one)
}

// discounted returns Σ cents·v^days and its derivative in x,
// −Σ days·cents·v^(days+1), with v = 1/(1+x). Flows are sorted by day, so
// each power is the previous one times v^gap; gaps between installments
// are 28 to 31 days, so their powers are computed once.
func discounted(flows []cashFlow, x decimal.Decimal) (value, slope decimal.Decimal) {
	v := one.DivRound(one.Add(x), cetPrecision)
	gaps := map[int64]decimal.Decimal{}
	power, day := one, int64(0)
	var weighted decimal.Decimal
	for _, f := range flows {
		if gap := f.days - day; gap > 0 {
			vg, ok := gaps[gap]
			if !ok {
				vg = powTruncatedTo(v, int(gap), cetPrecision)
				gaps[gap] = vg
			}
			power = power.Mul(vg).Truncate(cetPrecision)
			day = f.days
		}
		pv := power.Mul(decimal.NewFromInt(f.cents))
		value = value.Add(pv)
		weighted = weighted.Add(pv.Mul(decimal.NewFromInt(f.days)))
	}
	return value, weighted.Mul(v).Neg().Truncate(cetPrecision)
}

// powTruncatedTo is powTruncated to a given number of places.
func powTruncatedTo(x decimal.Decimal, n int, places int32) decimal.Decimal {
	result := one
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			result = result.Mul(x).Truncate(places)
		}
		x = x.Mul(x).Truncate(places)
	}
	return result
}

// Cost discloses the cost of the billing: Disclosed when set, the plan's
// when the billing was just charged, or else from
// its bills (loaded), charged when the billing was created, which gives the
// same figures BuildSchedule gave the plan.
func (b *Billing) Cost() Cost {
	if b.Disclosed != nil {
		return *b.Disclosed
	}
	if b.planned != nil {
		return *b.planned
	}
	bills := make([]ScheduledBill, 0, len(b.Bills))
	for _, bill := range b.Bills {
		bills = append(bills, ScheduledBill{Number: bill.Number, Type: bill.Type, AmountCents: bill.AmountCents, DueDate: bill.DueDate, Details: bill.Details})
	}
	c, err := CostOf(b.CreatedAt, bills)
	if err != nil { // only for sums past any plan's; show what is certain
		return Cost{TotalPayableCents: b.AmountCents}
	}
	return c
}
