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

// LatePenalty computes the penalty of an unpaid bill at now. The bill is
// late only after the later of lateAfter (its effective due date: its due
// date moved to the next business day) and disablePenaltiesUntil (a
// seller's waiver). Once late at all, the fine applies in full; interest is
// simple, monthly rate / 30 per calendar day, counting São Paulo calendar
// dates from the later of due and the waiver to now: a bill due on a
// Saturday is payable without either through Monday, and paid on Tuesday
// owes the Sunday, the Monday and the Tuesday, as a bank charges it. Fine
// and interest are each rounded half-up to the cent on their own, so each
// matches what the bill shows.
func LatePenalty(originalCents int64, due, lateAfter time.Time, disablePenaltiesUntil *time.Time, now time.Time, fineRate, monthlyInterestRate Rate) Penalty {
	from := due
	if disablePenaltiesUntil != nil {
		if disablePenaltiesUntil.After(lateAfter) {
			lateAfter = *disablePenaltiesUntil
		}
		if disablePenaltiesUntil.After(from) {
			from = *disablePenaltiesUntil
		}
	}
	if !now.After(lateAfter) {
		return Penalty{}
	}
	days := calendarDaysBetween(from, now)
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
