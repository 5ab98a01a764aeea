package parcela

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
)

// The first period of a financed plan, from the charge to installment 1,
// runs from 28 days (one month after a down payment due in February) to
// 62 days after the down payment's due date (due_day just short of one
// month after it). See InstallmentDueDate.
const (
	minFirstPeriodDays       = 28
	maxFirstPeriodDaysAfterD = 62
)

// checkPlans refuses a configuration of an offer of amount cents when some
// plan it allows could not be charged: a bill of 0 cents, an installment
// below the configuration's minimum, a bill above what a boleto or Pix code
// carries, a last installment off level (maxLastDrift), or a cost of
// credit beyond MaxCETAnnualRate. A charge checks its
// own plan again (PlanCharge); this makes the seller find out at the offer,
// not when a customer is refused.
//
// The amounts of a plan depend only on the number of installments and the
// days to installment 1, so every number of installments is tried at every
// length that period can have. Not only at its ends: the PMT grows with
// the period, but the last installment settles the rounding of every PMT
// before it, grown by (1+i) each month, and that residue moves either way
// from one day to the next (at 0.99% over 85 installments a bill can be
// 44 cents smaller at 29 days than at 28).
func checkPlans(v *Validation, at string, pc *PaymentConfiguration, amount int64) {
	in := ScheduleInput{AmountCents: amount, RegistrationFee: pc.RegistrationFee, InterestRate: pc.InterestRate,
		DownPaymentValue: pc.DownPaymentValue, Upfront: pc.PaymentType == Upfront}
	fee := pc.RegistrationFee.MulCents(amount)
	if in.Upfront {
		if amount+fee > MaxAmountCents {
			v.Add(at+"registration_fee", "too_large", fmt.Sprintf("makes the bill of %d cents, more than a boleto or Pix code can carry (%d)", amount+fee, int64(MaxAmountCents)))
		}
		return
	}
	in.DownPaymentType = *pc.DownPaymentType
	down, err := in.downPaymentCents()
	if err != nil {
		v.Add(at+"down_payment_value", "invalid", ErrorMessage(err))
		return
	}
	switch first := down + fee; {
	case first < 1:
		v.Add(at+"down_payment_value", "too_small", "leaves the first bill at 0 cents: ask for a down payment or a registration fee")
		return
	case first > MaxAmountCents:
		v.Add(at+"registration_fee", "too_large", fmt.Sprintf("makes the first bill of %d cents, more than a boleto or Pix code can carry (%d)", first, int64(MaxAmountCents)))
		return
	}
	principal := amount - down
	// The down payment falls due ExpiresIn hours after the charge: at
	// least (ExpiresIn−1)/24 dates later (one less than whole days, should
	// a day ever last 25 hours again), at most ExpiresIn/24 + 1.
	shortest := int64(minFirstPeriodDays + max(0, pc.ExpiresIn-1)/24)
	longest := int64(pc.ExpiresIn/24) + 1 + maxFirstPeriodDaysAfterD
	floor := pc.MinInstallmentCents
	factors := []decimal.Decimal{one}
	if !pc.InterestRate.IsZero() { // without interest every period gives the same table
		factors = factors[:0]
		for days := shortest; days <= longest; days++ {
			factors = append(factors, prorataFactor(pc.InterestRate.Decimal(), days))
		}
	}
	allowed := 1         // the most installments such that every smaller number is fine too
	aboveBoleto := false // a bill of the first plan refused is more than a boleto carries
	uneven := false      // the first plan refused has its last installment off level
	for n := 2; n <= pc.MaxInstallments; n++ {
		ok := true
		for _, factor := range factors {
			amounts, err := priceTableCarried(principal, pc.InterestRate, n-1, factor)
			if errors.Is(err, errUnevenPlan) {
				ok, uneven = false, true
				break
			} else if err != nil {
				ok, aboveBoleto = false, true // past int64: above any boleto
				break
			}
			for _, p := range amounts.parts {
				bill := p.AmortizationCents + p.InterestCents
				if bill < max(floor, 1) || bill > MaxAmountCents {
					ok = false
				}
				aboveBoleto = aboveBoleto || bill > MaxAmountCents
			}
		}
		if !ok {
			break
		}
		allowed = n
	}
	if allowed < 2 && aboveBoleto {
		// The fewest installments make the largest bills: no number of
		// them up to max_installments helps, only less credit or interest.
		v.Add(at+"down_payment_value", "too_small", fmt.Sprintf("leaves a 2-installment plan an installment above %d cents, more than a boleto or Pix code can carry: raise the down payment or lower the interest rate", int64(MaxAmountCents)))
		return
	}
	if allowed < pc.MaxInstallments && uneven {
		v.Add(at+"max_installments", "too_large", fmt.Sprintf("allows plans whose last installment is not level with the others: at this interest rate, rounding each installment to the cent grows into the last one; at most %d installments keep every plan level", allowed))
		return
	}
	if allowed < pc.MaxInstallments {
		msg := fmt.Sprintf("allows plans with installments below the minimum of %d cents (or above %d); at most %d installments keep every bill within them",
			floor, int64(MaxAmountCents), allowed)
		if allowed < 2 {
			msg = fmt.Sprintf("allows no plan whose installments reach the minimum of %d cents: lower the down payment or offer upfront payment only", floor)
		}
		v.Add(at+"max_installments", "too_large", msg)
		return
	}
	// The cost of credit is highest for the shortest plan, whose fee is
	// spread over the fewest payments; the longest is checked as well.
	for _, n := range []int{2, pc.MaxInstallments} {
		if !planCostWithinMax(principal, fee, pc.InterestRate, n-1) {
			v.Add(at+"registration_fee", "too_large", fmt.Sprintf("makes the cost of credit (CET) of a %d-installment plan exceed %s a year: lower the fee, or the down payment", n, MaxCETAnnualRate))
			return
		}
	}
}

// planCostWithinMax tells whether the CET of a plan stays within
// MaxCETAnnualRate in its dearest calendar: the fee paid at the charge and
// installments every 28 days from the 28th.
func planCostWithinMax(principal, fee int64, rate Rate, n int) bool {
	// Not priceTable: the level bound is checkPlans' to apply, at the
	// periods a charge can have; 28 days is a bound on the cost only.
	amounts, err := priceTableUnlevelled(principal, rate, n, prorataFactor(rate.Decimal(), minFirstPeriodDays))
	if errors.Is(err, errUnevenPlan) {
		// Rounding that repays more than is left at 28 days: a calendar
		// this configuration's charges do not have (checkPlans found every
		// one they have level), and no bound on theirs. A charge checks
		// its own plan's cost.
		return true
	} else if err != nil {
		return false
	}
	flows := []cashFlow{{days: 0, cents: fee}}
	for k, p := range amounts.parts {
		flows = append(flows, cashFlow{days: int64(minFirstPeriodDays * (k + 1)), cents: p.AmortizationCents + p.InterestCents})
	}
	_, ok := solveDailyRate(principal, flows)
	return ok
}
