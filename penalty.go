package parcela

import (
	"time"

	"github.com/shopspring/decimal"
)

// Penalty is what a late bill owes on top of its original amount.
type Penalty struct {
	FineCents     int64
	InterestCents int64
	DaysLate      int64
}

// Total is the bill's current amount: original plus fine plus interest.
func (p Penalty) Total(originalCents int64) int64 {
	return originalCents + p.FineCents + p.InterestCents
}

// LatePenalty computes the penalty of an unpaid bill at now. The bill is late
// only after the later of its effective due date and disablePenaltiesUntil
// (a seller's waiver). Once late at all, the fine applies in full; interest
// is simple, monthly rate / 30 per calendar day, counting São Paulo calendar
// dates from that threshold to now. Fine and interest are each rounded
// half-up to the cent on their own, so each matches what the bill shows.
func LatePenalty(originalCents int64, effectiveDue time.Time, disablePenaltiesUntil *time.Time, now time.Time, fineRate, monthlyInterestRate Rate) Penalty {
	threshold := effectiveDue
	if disablePenaltiesUntil != nil && disablePenaltiesUntil.After(threshold) {
		threshold = *disablePenaltiesUntil
	}
	if !now.After(threshold) {
		return Penalty{}
	}
	days := calendarDaysBetween(threshold, now)
	interest := decimal.NewFromInt(originalCents).
		Mul(monthlyInterestRate.Decimal()).
		Mul(decimal.NewFromInt(days)).
		DivRound(decimal.NewFromInt(30), 0) // exact quotient rounded half-up: no double rounding
	return Penalty{
		FineCents:     fineRate.MulCents(originalCents),
		InterestCents: interest.IntPart(),
		DaysLate:      days,
	}
}
