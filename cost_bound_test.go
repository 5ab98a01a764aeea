package parcela

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shopspring/decimal"
)

// The bound the offer page checks each count's CET against answers as the
// search does: random flows lent at a rate drawn anywhere up to past the
// maximum, and many right at its edges (the rate the bound trusts, the
// maximum's own daily rate, the search's first bound).
func TestCETWithinMaxIsTheSearchsAnswer(t *testing.T) {
	t.Parallel()
	if annualRate(withinMaxDailyRate).GreaterThanOrEqual(MaxCETAnnualRate.Decimal()) {
		t.Fatalf("withinMaxDailyRate's annual rate %s is not below the maximum", annualRate(withinMaxDailyRate))
	}
	rng := rand.New(rand.NewPCG(29, 11))
	// The maximum's own daily rate, (1+100000)^(1/365) − 1, to 12 places.
	edge := decimal.RequireFromString("0.032045")
	for step := decimal.New(1, -7); step.GreaterThan(decimal.New(1, -13)); step = step.Div(decimal.NewFromInt(10)) {
		for annualRate(edge.Add(step)).LessThanOrEqual(MaxCETAnnualRate.Decimal()) {
			edge = edge.Add(step)
		}
	}
	edges := []decimal.Decimal{withinMaxDailyRate, edge, maxDailyRate, decimal.Zero}
	var within, beyond int
	for i := range 3000 {
		n := 1 + rng.IntN(120)
		flows := make([]cashFlow, n)
		day := int64(rng.IntN(31))
		for k := range flows {
			flows[k] = cashFlow{days: day, cents: 1 + rng.Int64N([]int64{100, 100_000, 1_000_000_000}[rng.IntN(3)])}
			day += 28 + int64(rng.IntN(4))
		}
		rate := decimal.NewFromFloat(rng.Float64() * 0.04)
		if i%2 == 0 {
			jitter := decimal.New(rng.Int64N(2001)-1000, -int32(9+rng.IntN(10)))
			rate = edges[rng.IntN(len(edges))].Add(jitter)
			if rate.IsNegative() {
				rate = decimal.Zero
			}
		}
		worth, _ := discounted(slices.Clone(flows), rate)
		principal := worth.Add(decimal.NewFromInt(rng.Int64N(3) - 1)).IntPart()
		if principal <= 0 {
			continue
		}
		_, want := solveDailyRate(principal, slices.Clone(flows))
		if got := cetWithinMax(principal, slices.Clone(flows)); got != want {
			t.Fatalf("case %d: principal %d, %d flows from day %d lent at %s: bound says %v, search %v", i, principal, n, flows[0].days, rate, got, want)
		}
		if want {
			within++
		} else {
			beyond++
		}
	}
	if within < 500 || beyond < 500 {
		t.Fatalf("%d within the maximum, %d beyond: the cases do not cover both", within, beyond)
	}
}
