package parcela

import (
	"slices"
	"time"
)

// PlanCounts plans req at each number of installments in counts:
// plans[i] is the plan PlanCharge (PlanCardCharge when card) returns for
// req asking for counts[i] installments, or nil where it refuses. One plan
// carries its cost disclosure (its Schedule's TotalInterestCents and
// CETAnnualRate): the one for disclose installments, or where that count
// is refused or not asked for, the last one planned. The others' are
// zero: the offer page shows every number's installments and the chosen
// one's cost, and a CET is a search in 30-place decimals (a 120-month
// plan's 119 took 120 ms of CPU on a view its memo missed). Whether each
// is within the maximum is still checked, so the same counts are offered.
//
// Of a financed plan only the schedule depends on the number, so
// once one number is planned, every other one only gets its schedule:
// the request's checks, the down payment and the due dates are not done
// again.
func PlanCounts(req ChargeRequest, o *Order, c *Company, now time.Time, counts []int, card bool, disclose int) []*ChargePlan {
	plans := make([]*ChargePlan, len(counts))
	var first *ChargePlan
	var basis *financedBasis
	for i, n := range counts {
		if first != nil {
			plans[i] = first.withInstallments(n, basis, c)
			continue
		}
		r := req
		r.Installments = &n
		var err error
		if card {
			plans[i], err = PlanCardCharge(r, o, c, now)
		} else {
			plans[i], err = PlanCharge(r, o, c, now, "")
		}
		if err != nil {
			plans[i] = nil
			continue
		}
		if plans[i].Configuration.PaymentType == Financed {
			if b, err := newFinancedBasis(plans[i].scheduleInput(o.Offer, now)); err == nil {
				first, basis = plans[i], b
			}
		}
	}
	if basis != nil {
		basis.disclose(plans, counts, disclose, first)
	}
	return plans
}

// disclose gives the plan for disclose installments its cost, or where
// there is none the last plan's (PlanCounts). first, PlanCharge's own
// plan, has it already, and keeps it only if it is that plan.
func (b *financedBasis) disclose(plans []*ChargePlan, counts []int, disclose int, first *ChargePlan) {
	at := -1
	for i, p := range plans {
		if p != nil && (at < 0 || counts[at] != disclose) {
			at = i
		}
	}
	if at < 0 || plans[at] == first {
		return
	}
	if i := slices.Index(plans, first); i >= 0 {
		undisclosed := *first
		undisclosed.Schedule.TotalInterestCents, undisclosed.Schedule.CETAnnualRate = 0, nil
		plans[i] = &undisclosed
	}
	s, err := b.withCost(plans[at].Schedule)
	if err != nil {
		// checkCost passed it, and withCost, which it mirrors, refuses
		// it: refused here too rather than shown without its cost.
		plans[at] = nil
		b.disclose(plans, counts, disclose, first)
		return
	}
	plans[at].Schedule = s
}

// withInstallments is p, a financed plan, for n installments: what
// PlanCharge checks that depends on the number, then the schedule, its
// cost checked but not disclosed (PlanCounts).
func (p *ChargePlan) withInstallments(n int, b *financedBasis, c *Company) *ChargePlan {
	if n < 2 || n > min(p.Configuration.MaxInstallments, c.MaxInstallments) || n > MaxInstallments {
		return nil
	}
	s, err := b.bills(n)
	if err == nil {
		err = b.checkCost(s)
	}
	if err != nil || p.checkFloor(s, c) != nil {
		return nil
	}
	q := *p
	q.Installments, q.Schedule = n, s
	return &q
}
