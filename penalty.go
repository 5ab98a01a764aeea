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
//
// A waiver's end is the first instant penalties accrue ("none before this
// moment"), so the bill is late from it and its days count from the
// millisecond before (waivedThrough), as a late-issued payment's from
// the millisecond before its expiry (Bill.lateFrom).
func LatePenalty(originalCents int64, due, lateAfter time.Time, disablePenaltiesUntil *time.Time, now time.Time, fineRate, monthlyInterestRate Rate) Penalty {
	from := due
	if disablePenaltiesUntil != nil {
		last := waivedThrough(*disablePenaltiesUntil)
		if last.After(lateAfter) {
			lateAfter = last
		}
		if last.After(from) {
			from = last
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

// waivedThrough is the last instant a waiver ending at until waives, the
// millisecond before it. Counted from until itself, a waiver to 00:00:00.000
// of a day, which waives none of it, made that day no day late: a day's
// interest short on every day after, against the same waiver written as
// 23:59:59.999 of the day before.
func waivedThrough(until time.Time) time.Time { return until.Add(-time.Millisecond) }
