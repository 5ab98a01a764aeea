package parcela

import (
	"testing"
	"time"
)

// A waiver that ends at the first instant of a São Paulo day
// (disable_penalties_until "…T00:00:00.000-03:00", "no penalties before
// this moment") waives none of that day: the whole day is late and
// counts as a day of interest, as a late-issued Pix expiring at
// 00:00:00.000 counts from the millisecond before its expiry
// (TestLateIssuedPixCountsItsFirstLateDay). It did not: one millisecond
// more of waiver (…T00:00:00.000 instead of the day before's
// 23:59:59.999) took a whole day of interest off the bill (an audit).
func TestWaiverEndingAtMidnightCountsThatDay(t *testing.T) {
	t.Parallel()
	c := &Company{FineRate: MustRate("0.02"), MonthlyInterestRate: MustRate("0.01")}
	due := time.Date(2027, 3, 10, 23, 59, 59, 999_000_000, SaoPaulo) // a Wednesday
	issued := time.Date(2027, 3, 1, 10, 0, 0, 0, SaoPaulo)           // issued in time
	bill := func(until time.Time) *Bill {
		return &Bill{Type: BillTypeInstallment, Status: BillOverdue, AmountCents: 30000, DueDate: due, EffectiveDueDate: EffectiveDueDate(due),
			DisablePenaltiesUntil: &until,
			Payments:              []*Payment{{Method: MethodBoleto, Status: PaymentExpired, AmountCents: 30000, CreatedAt: issued, ExpiresAt: BoletoExpiry(due, 1)}}}
	}
	endOf16 := time.Date(2027, 3, 16, 23, 59, 59, 999_000_000, SaoPaulo)
	startOf17 := time.Date(2027, 3, 17, 0, 0, 0, 0, SaoPaulo) // one millisecond later
	now := time.Date(2027, 3, 18, 10, 0, 0, 0, SaoPaulo)
	a, b := bill(endOf16).Penalty(now, c), bill(startOf17).Penalty(now, c)
	t.Logf("waived until %s: %+v", endOf16.Format(TimestampLayout), a)
	t.Logf("waived until %s: %+v", startOf17.Format(TimestampLayout), b)
	// Late on 17 and 18 March either way: 2% of 30000 and 1% a month, 10 cents a day.
	want := Penalty{FineCents: 600, InterestCents: 20, DaysLate: 2}
	if a != want {
		t.Errorf("waived until the end of 16 March, at %s: %+v, want %+v", now.Format(time.DateTime), a, want)
	}
	if b != want {
		t.Errorf("waived until 00:00:00.000 of 17 March (no penalties before that moment; all of 17 March unwaived), at %s: %+v, want %+v", now.Format(time.DateTime), b, want)
	}
	// On 17 March itself, after the waiver: a late day, fine and a day's interest.
	mid17 := time.Date(2027, 3, 17, 12, 0, 0, 0, SaoPaulo)
	if got := bill(startOf17).Penalty(mid17, c); got.InterestCents != 10 {
		t.Errorf("waived until 00:00 of 17 March, at noon of 17 March: %+v, want a day's interest (10 cents)", got)
	}
}
