package parcela

import (
	"testing"
	"time"
)

// The issue window opens at the start of the São Paulo day
// InstallmentIssueDays calendar days before the due day, whatever the
// days' lengths in between: across the end of daylight saving (a 25-hour
// Saturday, 17 February 2018) 10 × 24 h ended an hour short of the due
// instant, and across its start (a 23-hour Sunday, 15 October 2017) an
// hour past it.
func TestInIssueWindow(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	sp := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, SaoPaulo) }
	for _, tt := range []struct {
		name string
		due  time.Time
		now  time.Time
		want bool
	}{
		{"ten days before, at the day's start", EndOfDay(sp(2027, 3, 11, 12, 0)), StartOfDay(2027, 3, 1), true},
		{"the day before that, at its end", EndOfDay(sp(2027, 3, 11, 12, 0)), EndOfDay(sp(2027, 2, 28, 12, 0)), false},
		{"across the end of daylight saving, at the day's start", EndOfDay(sp(2018, 2, 20, 12, 0)), StartOfDay(2018, 2, 10), true},
		{"across the end of daylight saving, at noon", EndOfDay(sp(2018, 2, 20, 12, 0)), sp(2018, 2, 10, 12, 0), true},
		{"across the end of daylight saving, the day before", EndOfDay(sp(2018, 2, 20, 12, 0)), EndOfDay(sp(2018, 2, 9, 12, 0)), false},
		{"across its start, at the day's start", EndOfDay(sp(2017, 10, 20, 12, 0)), StartOfDay(2017, 10, 10), true},
		{"across its start, the day before", EndOfDay(sp(2017, 10, 20, 12, 0)), EndOfDay(sp(2017, 10, 9, 12, 0)), false},
		{"31 December to 10 January", EndOfDay(sp(2027, 1, 10, 12, 0)), StartOfDay(2026, 12, 31), true},
		{"30 December to 10 January", EndOfDay(sp(2027, 1, 10, 12, 0)), EndOfDay(sp(2026, 12, 30, 12, 0)), false},
	} {
		if got := c.InIssueWindow(tt.due, tt.now); got != tt.want {
			t.Errorf("%s: due %v at %v: in the window %v, want %v", tt.name, tt.due, tt.now, got, tt.want)
		}
		// The store's selection, whole milliseconds plus the slack, holds
		// every bill the window does.
		if tt.want && tt.due.After(EndOfDay(tt.now).Add(time.Duration(c.InstallmentIssueDays)*24*time.Hour+IssueWindowSlack)) {
			t.Errorf("%s: the store would not select a bill in the window", tt.name)
		}
	}
}
