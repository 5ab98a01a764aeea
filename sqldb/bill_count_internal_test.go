package sqldb

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A due date's day begins at 03:00 UTC at or before it, for instants on
// either side of 1970 and of year 1 and 9999; and countDays splits a range
// into whole days and the parts of days at its ends that together are the
// range, no more and no less.
func TestCountDaysSplitsARangeExactly(t *testing.T) {
	first := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	last := time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli()
	rng := rand.New(rand.NewPCG(1, 2))
	instant := func() int64 {
		switch rng.IntN(4) {
		case 0: // a day's start, give or take a millisecond
			return dueDay(rng.Int64N(last-first)+first) + rng.Int64N(3) - 1
		case 1: // a whole hour
			return (rng.Int64N(last-first) + first) / 3600000 * 3600000
		case 2: // around 1970
			return rng.Int64N(4*dayMS) - 2*dayMS
		}
		return rng.Int64N(last-first) + first
	}
	for range 200000 {
		ms := instant()
		d := dueDay(ms)
		if s := time.UnixMilli(d).UTC(); d > ms || ms-d >= dayMS || s.Hour() != 3 || s.Minute() != 0 || s.Second() != 0 || s.Nanosecond() != 0 {
			t.Fatalf("dueDay(%d) = %d (%s)", ms, d, time.UnixMilli(d).UTC())
		}
		from, to := instant(), instant()
		var fromP, toP *int64
		if rng.IntN(8) > 0 {
			fromP = &from
		}
		if rng.IntN(8) > 0 {
			toP = &to
		}
		days, edges := countDays(fromP, toP)
		var covered int64
		for _, e := range edges {
			if e[0] >= e[1] || fromP != nil && e[0] < from || toP != nil && e[1] > to {
				t.Fatalf("[%v, %v): part %v outside the range or empty", show(fromP), show(toP), e)
			}
			covered += e[1] - e[0]
		}
		if days == nil {
			if fromP == nil || toP == nil {
				t.Fatalf("[%v, %v): no whole days in an unbounded range", show(fromP), show(toP))
			}
			if want := max(0, to-from); covered != want {
				t.Fatalf("[%d, %d): parts cover %d ms, want %d", from, to, covered, want)
			}
			continue
		}
		lo, hi := days[0], days[1]
		for _, d := range []*int64{lo, hi} {
			if d != nil && dueDay(*d) != *d {
				t.Fatalf("[%v, %v): whole days bounded at %d, not a day's start", show(fromP), show(toP), *d)
			}
		}
		if (lo == nil) != (fromP == nil) || (hi == nil) != (toP == nil) || lo != nil && hi != nil && *lo >= *hi {
			t.Fatalf("[%v, %v): whole days [%v, %v)", show(fromP), show(toP), show(lo), show(hi))
		}
		if lo != nil && (*lo < from || *lo-from >= dayMS) || hi != nil && (*hi > to || to-*hi >= dayMS) {
			t.Fatalf("[%v, %v): whole days [%v, %v) leave a whole day to the parts", show(fromP), show(toP), show(lo), show(hi))
		}
		if lo != nil && hi != nil && covered+*hi-*lo != to-from {
			t.Fatalf("[%d, %d): days [%d, %d) and parts %v cover %d ms, want %d", from, to, *lo, *hi, edges, covered+*hi-*lo, to-from)
		}
	}
}

// show is an optional bound, for messages.
func show(ms *int64) any {
	if ms == nil {
		return "unbounded"
	}
	return *ms
}
