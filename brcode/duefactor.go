package brcode

import (
	"fmt"
	"time"
)

// The due-date factor ("fator de vencimento") is the number of days from the
// FEBRABAN base date 1997-10-07, so 2000-07-03 (when the factor entered the
// barcode) is 1000. The four digits ran out on 2025-02-21 (9999); FEBRABAN
// then restarted the count at 1000 on 2025-02-22, and every later exhaustion
// again returns to 1000, i.e. the factor cycles through 1000..9999 every
// 9000 days.
const (
	factorResetDays = 10_000 // days from the base date to 2025-02-22
	factorCycleDays = 9_000  // length of each cycle after the reset
)

var factorBaseDays = civilDays(time.Date(1997, time.October, 7, 0, 0, 0, 0, time.UTC))

// civilDays numbers the calendar date of t (in t's own location), so a due
// date of "2025-02-22 00:00 -03:00" is the 22nd even though it is the 22nd
// 03:00 in UTC.
func civilDays(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// DueFactor returns the 4-digit due-date factor for the calendar date of
// date. Dates before the base date 1997-10-07 have no factor. (Factors below
// 1000, for dates before 2000-07-03, follow the formula but never appeared
// on real boletos; "0000" means "no due date" in a barcode.)
func DueFactor(date time.Time) (string, error) {
	days := civilDays(date) - factorBaseDays
	if days < 0 {
		return "", fmt.Errorf("%w: due date %s is before the factor base date 1997-10-07", ErrFormat, date.Format(time.DateOnly))
	}
	if days >= factorResetDays {
		days = 1000 + (days-factorResetDays)%factorCycleDays
	}
	return fmt.Sprintf("%04d", days), nil
}

// DueDateFromFactor returns the due date a factor stands for. Since the
// reset the same factor recurs every 9000 days, so it picks the date nearest
// to reference (normally "today" or the date the boleto was read); ties go
// to the later date. The result is the date's first instant in reference's
// location: midnight, or, on a day daylight saving began at midnight
// (São Paulo until 2019), 01:00, where time.Date answers 23:00 of the day
// before. Factor 0 ("no due date") and values outside 0..9999 give the
// zero time.
func DueDateFromFactor(factor int, reference time.Time) time.Time {
	if factor <= 0 || factor > 9999 {
		return time.Time{}
	}
	ref := civilDays(reference) - factorBaseDays
	best := int64(factor) // first cycle: plain days since the base date
	if factor >= 1000 {
		first := int64(factorResetDays + factor - 1000)
		k := max(0, (ref-first)/factorCycleDays)
		for _, kk := range []int64{0, k - 1, k, k + 1} {
			if kk < 0 {
				continue
			}
			c := first + kk*factorCycleDays
			if dc, db := abs64(c-ref), abs64(best-ref); dc < db || (dc == db && c > best) {
				best = c
			}
		}
	}
	y, m, d := time.Unix((factorBaseDays+best)*86400, 0).UTC().Date()
	t := time.Date(y, m, d, 0, 0, 0, 0, reference.Location())
	if t.Day() != d {
		_, t = t.ZoneBounds() // the offset that skipped midnight starts the day
	}
	return t
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
