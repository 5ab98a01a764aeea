package parcela

import "time"

// PlanCounts plans req at each number of installments in counts:
// plans[i] is the plan PlanCharge (PlanCardCharge when card) returns for
// req asking for counts[i] installments, or nil where it refuses.
//
// The offer page shows every number its configuration allows, on every
// view. Of a financed plan only the schedule depends on the number, so
// once one number is planned, every other one only gets its schedule:
// the request's checks, the down payment and the due dates are not done
// again.
func PlanCounts(req ChargeRequest, o *Order, c *Company, now time.Time, counts []int, card bool) []*ChargePlan {
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
	return plans
}

// withInstallments is p, a financed plan, for n installments: what
// PlanCharge checks that depends on the number, then the schedule.
func (p *ChargePlan) withInstallments(n int, b *financedBasis, c *Company) *ChargePlan {
	if n < 2 || n > min(p.Configuration.MaxInstallments, c.MaxInstallments) || n > MaxInstallments {
		return nil
	}
	s, err := b.bills(n)
	if err == nil {
		s, err = b.withCost(s)
	}
	if err != nil || p.checkFloor(s, c) != nil {
		return nil
	}
	q := *p
	q.Installments, q.Schedule = n, s
	return &q
}
