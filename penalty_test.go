package parcela

import (
	"testing"
	"time"
)

func TestLatePenalty(t *testing.T) {
	t.Parallel()
	// Tuesday 2026-03-10 is a business day, so it is its own effective due date.
	due := EffectiveDueDate(calEndOfDay(2026, time.March, 10))
	fine, interest := MustRate("0.02"), MustRate("0.01")
	tests := []struct {
		name string
		now  time.Time
		want Penalty
	}{
		{"before due", calSP(2026, time.March, 9, 12, 0, 0, 0), Penalty{}},
		{"at the due instant", due, Penalty{}},
		{"last minute of the due day", calSP(2026, time.March, 10, 23, 59, 0, 0), Penalty{}},
		// 10000 × 0.01 / 30 × days: 3.33 → 3, 100, 103.33 → 103.
		{"1 day late, first instant", calSP(2026, time.March, 11, 0, 0, 0, 0), Penalty{FineCents: 200, InterestCents: 3, DaysLate: 1}},
		{"1 day late, end of day", calEndOfDay(2026, time.March, 11), Penalty{FineCents: 200, InterestCents: 3, DaysLate: 1}},
		{"30 days late", calSP(2026, time.April, 9, 10, 0, 0, 0), Penalty{FineCents: 200, InterestCents: 100, DaysLate: 30}},
		{"31 days late", calSP(2026, time.April, 10, 10, 0, 0, 0), Penalty{FineCents: 200, InterestCents: 103, DaysLate: 31}},
		// 03:30 UTC on Mar 11 is Mar 11 00:30 in São Paulo: one calendar day.
		{"now given in UTC", time.Date(2026, time.March, 11, 3, 30, 0, 0, time.UTC), Penalty{FineCents: 200, InterestCents: 3, DaysLate: 1}},
	}
	for _, tt := range tests {
		got := LatePenalty(10000, due, due, nil, tt.now, fine, interest)
		if got != tt.want {
			t.Errorf("%s: LatePenalty = %+v, want %+v", tt.name, got, tt.want)
		}
		if total := got.Total(10000); total != 10000+tt.want.FineCents+tt.want.InterestCents {
			t.Errorf("%s: Total = %d", tt.name, total)
		}
	}
}

// Due on a Saturday, a bill is payable without penalty through Monday;
// paid on Tuesday it owes the fine and the interest of every day since
// Saturday, as a bank charges it, not only Tuesday's.
func TestLatePenaltyDueOnSaturday(t *testing.T) {
	t.Parallel()
	due := calEndOfDay(2026, time.March, 7)
	eff := EffectiveDueDate(due) // Saturday → Monday Mar 9
	fine, interest := MustRate("0.02"), MustRate("0.01")
	if got := LatePenalty(10000, due, eff, nil, calSP(2026, time.March, 9, 18, 0, 0, 0), fine, interest); got != (Penalty{}) {
		t.Errorf("paying on Monday: %+v, want no penalty", got)
	}
	want := Penalty{FineCents: 200, InterestCents: 10, DaysLate: 3}
	if got := LatePenalty(10000, due, eff, nil, calSP(2026, time.March, 10, 9, 0, 0, 0), fine, interest); got != want {
		t.Errorf("paying on Tuesday: %+v, want %+v", got, want)
	}
	// A waiver to Sunday noon: still payable through Monday, interest from Sunday.
	until := calSP(2026, time.March, 8, 12, 0, 0, 0)
	want = Penalty{FineCents: 200, InterestCents: 7, DaysLate: 2}
	if got := LatePenalty(10000, due, eff, &until, calSP(2026, time.March, 10, 9, 0, 0, 0), fine, interest); got != want {
		t.Errorf("paying on Tuesday, waived to Sunday: %+v, want %+v", got, want)
	}
}

func TestLatePenaltyDisabledUntil(t *testing.T) {
	t.Parallel()
	due := EffectiveDueDate(calEndOfDay(2026, time.March, 10))
	until := calSP(2026, time.March, 20, 12, 0, 0, 0)
	fine, interest := MustRate("0.02"), MustRate("0.01")
	tests := []struct {
		name string
		now  time.Time
		want Penalty
	}{
		{"after due, inside waiver", calSP(2026, time.March, 15, 10, 0, 0, 0), Penalty{}},
		{"the waiver's last instant", until.Add(-time.Millisecond), Penalty{}},
		// "None before this moment": from the waiver's end, the bill is late.
		{"waiver end instant", until, Penalty{FineCents: 200, InterestCents: 0, DaysLate: 0}},
		// Late the same calendar day the waiver ends: fine at once, no interest yet.
		{"hours after waiver", calSP(2026, time.March, 20, 13, 0, 0, 0), Penalty{FineCents: 200, InterestCents: 0, DaysLate: 0}},
		{"days counted from waiver", calSP(2026, time.March, 25, 13, 0, 0, 0), Penalty{FineCents: 200, InterestCents: 17, DaysLate: 5}},
	}
	for _, tt := range tests {
		if got := LatePenalty(10000, due, due, &until, tt.now, fine, interest); got != tt.want {
			t.Errorf("%s: LatePenalty = %+v, want %+v", tt.name, got, tt.want)
		}
	}

	// A waiver that ended before the due date changes nothing.
	early := calSP(2026, time.March, 1, 0, 0, 0, 0)
	want := Penalty{FineCents: 200, InterestCents: 3, DaysLate: 1}
	if got := LatePenalty(10000, due, due, &early, calSP(2026, time.March, 11, 8, 0, 0, 0), fine, interest); got != want {
		t.Errorf("earlier waiver: %+v, want %+v", got, want)
	}
}

func TestLatePenaltyRoundsEachPartHalfUp(t *testing.T) {
	t.Parallel()
	due := EffectiveDueDate(calEndOfDay(2026, time.March, 10))
	now := calSP(2026, time.March, 11, 8, 0, 0, 0) // 1 day late
	// fine 125 × 0.02 = 2.5 → 3; interest 125 × 0.12 / 30 × 1 = 0.5 → 1.
	// Rounded together they would be 3.0 → 3; apart they are 3 + 1.
	got := LatePenalty(125, due, due, nil, now, MustRate("0.02"), MustRate("0.12"))
	if want := (Penalty{FineCents: 3, InterestCents: 1, DaysLate: 1}); got != want {
		t.Fatalf("LatePenalty = %+v, want %+v", got, want)
	}
	if got.Total(125) != 129 {
		t.Errorf("Total = %d, want 129", got.Total(125))
	}
	// Just below half rounds down: 124 × 0.02 = 2.48 → 2; 124 × 0.12 / 30 = 0.496 → 0.
	if got := LatePenalty(124, due, due, nil, now, MustRate("0.02"), MustRate("0.12")); got != (Penalty{FineCents: 2, InterestCents: 0, DaysLate: 1}) {
		t.Errorf("below half: %+v", got)
	}
}

func TestLatePenaltyZeroRates(t *testing.T) {
	t.Parallel()
	due := EffectiveDueDate(calEndOfDay(2026, time.March, 10))
	got := LatePenalty(10000, due, due, nil, calSP(2026, time.April, 30, 0, 0, 0, 0), Rate{}, Rate{})
	if want := (Penalty{DaysLate: 51}); got != want {
		t.Errorf("zero rates: %+v, want %+v", got, want)
	}
}

// Days late are São Paulo calendar dates, whatever a month's length: 29
// February counts, a leap year is 366 days, and the largest bill's
// penalty is exact to the cent.
func TestLatePenaltyAcrossLeapDayAndAYear(t *testing.T) {
	t.Parallel()
	fine, interest := MustRate("0.02"), MustRate("0.01")
	due := EffectiveDueDate(calEndOfDay(2024, time.February, 28)) // a Wednesday
	tests := []struct {
		name     string
		original int64
		now      time.Time
		want     Penalty
	}{
		// 10000 × 0.01 / 30 × 2 = 6.67 → 7.
		{"over 29 February", 10000, calSP(2024, time.March, 1, 8, 0, 0, 0), Penalty{FineCents: 200, InterestCents: 7, DaysLate: 2}},
		{"on 29 February", 10000, calEndOfDay(2024, time.February, 29), Penalty{FineCents: 200, InterestCents: 3, DaysLate: 1}},
		// 366 days: 10000 × 0.01 × 366 / 30 = 1220.
		{"a leap year", 10000, calSP(2025, time.February, 28, 9, 0, 0, 0), Penalty{FineCents: 200, InterestCents: 1220, DaysLate: 366}},
		// 9999999999 × 0.02 = 199999999.98 → 200000000; × 0.01 × 366 / 30 = 1219999999.878 → 1220000000.
		{"the largest bill for a year", MaxAmountCents, calSP(2025, time.February, 28, 9, 0, 0, 0),
			Penalty{FineCents: 200000000, InterestCents: 1220000000, DaysLate: 366}},
	}
	for _, tt := range tests {
		if got := LatePenalty(tt.original, due, due, nil, tt.now, fine, interest); got != tt.want {
			t.Errorf("%s: LatePenalty = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
