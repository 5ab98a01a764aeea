package parcela

import (
	_ "embed"
	"sort"
	"sync"
	"time"
)

// saoPauloTZif is America/Sao_Paulo from the zone database Go ships (no
// daylight saving since 2019), built in rather than loaded: time.LoadLocation
// prefers the host's zoneinfo files, and a host whose database predates
// 2019 moved every November due day's end an hour, so instances on two
// hosts disagreed on when a bill was late.
//
//go:embed zoneinfo/America/Sao_Paulo
var saoPauloTZif []byte

// SaoPaulo is the zone every due date is rendered and reasoned in: the
// customer's calendar day decides when a bill is due and when it is late.
var SaoPaulo *time.Location = mustLoadLocation("America/Sao_Paulo", saoPauloTZif)

func mustLoadLocation(name string, tzif []byte) *time.Location {
	loc, err := time.LoadLocationFromTZData(name, tzif)
	if err != nil {
		panic("parcela: loading time zone " + name + ": " + err.Error())
	}
	return loc
}

// SaoPauloDate returns the first instant (StartOfDay) of t's São Paulo
// calendar date. time.Date's midnight of a day daylight saving began on is
// 23:00 of the day before, which read as that day: a boleto due on
// Tuesday 2 November 2004 was payable until Monday's end.
func SaoPauloDate(t time.Time) time.Time {
	y, m, d := t.In(SaoPaulo).Date()
	return StartOfDay(y, m, d)
}

// StartOfDay is the first instant of a São Paulo calendar date. Until 2019
// daylight saving began at midnight, so some days began at 01:00 (UTC−2),
// where time.Date answers 23:00 of the day before (UTC−3): the first
// instant is then the end of that offset's span.
func StartOfDay(y int, m time.Month, d int) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, SaoPaulo)
	if _, _, day := t.Date(); day != time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Day() {
		_, t = t.ZoneBounds()
	}
	return t
}

// Easter returns Easter Sunday (midnight, São Paulo) of the given Gregorian
// year, by the anonymous Gregorian (Meeus/Jones/Butcher) algorithm.
func Easter(year int) time.Time {
	a := year % 19
	b, c := year/100, year%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Date(year, time.Month(month), day, 0, 0, 0, 0, SaoPaulo)
}

// NationalHolidays lists the days of year on which Brazilian banks do not
// settle, as each day's first instant in São Paulo (StartOfDay), sorted: the national holidays (fixed ones;
// Carnival Monday and Tuesday, Good Friday and Corpus Christi from Easter;
// 20 November from 2024) and 31 December, when banks open to the public
// for no settlement (FEBRABAN). State and municipal holidays are out of scope.
func NationalHolidays(year int) []time.Time {
	date := func(m time.Month, d int) time.Time { return StartOfDay(year, m, d) }
	days := []time.Time{
		date(time.January, 1),   // Confraternização Universal
		date(time.April, 21),    // Tiradentes
		date(time.May, 1),       // Dia do Trabalho
		date(time.September, 7), // Independência
		date(time.October, 12),  // Nossa Senhora Aparecida
		date(time.November, 2),  // Finados
		date(time.November, 15), // Proclamação da República
		date(time.December, 25), // Natal
		date(time.December, 31), // no settlement: a bill due then is due on the next business day
	}
	if year >= 2024 { // Consciência Negra became national by Lei 14.759/2023.
		days = append(days, date(time.November, 20))
	}
	_, em, ed := Easter(year).Date()
	for _, offset := range []int{-48, -47, -2, 60} { // Carnival Mon/Tue, Good Friday, Corpus Christi
		days = append(days, date(em, ed+offset))
	}
	sort.Slice(days, func(i, j int) bool { return days[i].Before(days[j]) })
	return days
}

// holidaysByYear caches each year's non-settlement days as days of the year,
// since every due date, expiry and sweep asks about them.
var holidaysByYear sync.Map // int → map[int]bool

// isHoliday tells whether date, a calendar date as a UTC midnight, is a
// non-settlement day.
func isHoliday(date time.Time) bool {
	set, ok := holidaysByYear.Load(date.Year())
	if !ok {
		days := map[int]bool{}
		for _, h := range NationalHolidays(date.Year()) {
			days[h.In(SaoPaulo).YearDay()] = true
		}
		set, _ = holidaysByYear.LoadOrStore(date.Year(), days)
	}
	return set.(map[int]bool)[date.YearDay()]
}

// IsBusinessDay reports whether day's São Paulo calendar date is neither a
// weekend nor a day banks do not settle. The date is taken as a UTC
// midnight: a São Paulo midnight daylight saving skipped (2004-11-02) is
// 23:00 of the day before, whose weekday and day of year are not the date's.
func IsBusinessDay(day time.Time) bool {
	y, m, d := day.In(SaoPaulo).Date()
	date := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if wd := date.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	return !isHoliday(date)
}

// EffectiveDueDate moves due to the next business day when it falls on a
// weekend or holiday, keeping its São Paulo time of day: a bill due on a day
// banks are closed can be paid on the next day they open without penalty.
func EffectiveDueDate(due time.Time) time.Time {
	t := due.In(SaoPaulo)
	for !IsBusinessDay(t) {
		t = nextDay(t)
	}
	return t
}

// AddBusinessDays returns the n-th business day after t's São Paulo date, at
// t's time of day (t itself when n is 0).
func AddBusinessDays(t time.Time, n int) time.Time {
	t = t.In(SaoPaulo)
	for n > 0 {
		t = nextDay(t)
		if IsBusinessDay(t) {
			n--
		}
	}
	return t
}

// nextDay is the same São Paulo wall-clock time a calendar day later,
// rebuilt from the wall clock rather than adding 24h so the local time of
// day survives any UTC offset change on the way.
func nextDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d+1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), SaoPaulo)
}

// EndOfDay is the last millisecond (23:59:59.999, São Paulo) of t's São
// Paulo calendar date: the instant a bill due that day turns late.
func EndOfDay(t time.Time) time.Time {
	y, m, d := t.In(SaoPaulo).Date()
	return time.Date(y, m, d, 23, 59, 59, 999_000_000, SaoPaulo)
}

// BoletoExpiry is when an unpaid boleto due at due stops being payable: a
// boleto's due date is a calendar day, payable to its end, and when banks do
// not open that day, on the next business day; the bank's notice of a
// payment made on that last day arrives up to graceBusinessDays later, and
// the pages show the boleto payable through the grace. So the payment is
// payable through the end of the graceBusinessDays-th business day after
// the business-day-adjusted due date, and expires the millisecond after
// it (ExpiryAfter): expiring at that day's 23:59:59.999, it refused money
// paid in the millisecond the day still had.
func BoletoExpiry(due time.Time, graceBusinessDays int) time.Time {
	return ExpiryAfter(AddBusinessDays(BoletoPayableUntil(due), graceBusinessDays))
}

// BoletoNoticeDeadline is when the bank's notice of a payment of a boleto
// expiring at expiresAt has surely come: the end of the business day after
// its last payable day (that of the millisecond before expiresAt). A first
// bill's boleto is expired, and its order lapsed, only then: a payment
// made on its last day was noticed the next business day, after the expiry
// had canceled the order, and refused, the payer's money on no record.
func BoletoNoticeDeadline(expiresAt time.Time) time.Time {
	return ExpiryAfter(EndOfDay(AddBusinessDays(expiresAt.Add(-time.Millisecond), 1)))
}

// BoletoNoticeCutoff is the latest expires_at whose BoletoNoticeDeadline
// has come by now: 00:00 of the last business day before now's date. The
// deadline rises with expires_at, so the expiry sweep selects the first
// bills' boletos past it by comparing expires_at alone, which portable SQL
// can, where it cannot count business days.
func BoletoNoticeCutoff(now time.Time) time.Time {
	y, m, d := now.In(SaoPaulo).Date()
	day := time.Date(y, m, d, 12, 0, 0, 0, SaoPaulo) // noon: no midnight daylight saving skipped
	for {
		day = day.AddDate(0, 0, -1)
		if IsBusinessDay(day) {
			return StartOfDay(day.Year(), day.Month(), day.Day())
		}
	}
}

// ExpiryAfter is the expiry of a payment whose last payable instant is
// last: the millisecond after it. A payment settles only before its
// expires_at, and a bill due at the end of a day (23:59:59.999) is on
// time through that millisecond, so a payment expiring at it would refuse
// money paid on time.
func ExpiryAfter(last time.Time) time.Time { return last.Add(time.Millisecond) }

// BoletoPayableUntil is the last instant a boleto due at due can be paid:
// the end of its due day, moved to the next business day. A bill charged
// as a boleto is not late before then.
func BoletoPayableUntil(due time.Time) time.Time {
	return EndOfDay(EffectiveDueDate(SaoPauloDate(due)))
}

// PaymentExpiry is when a payment issued for a bill due at due expires: a
// Pix charge at due exactly, a boleto at its BoletoExpiry.
func PaymentExpiry(method string, due time.Time, boletoGraceBusinessDays int) time.Time {
	if method == MethodBoleto {
		return BoletoExpiry(due, boletoGraceBusinessDays)
	}
	return due.In(SaoPaulo)
}

// InstallmentDueDate is the due date of installment k (1-based) of a plan
// whose down payment is due at downPaymentDue, at 23:59:59.999 São Paulo.
//
// Installment 1 falls due on the first due_day at least one month after the
// down payment's São Paulo due date, so that no installment is due (and
// late) before the down payment that starts the plan: one month after
// 8 March is 8 April, so due_day 10 gives 10 April and due_day 5 gives 5 May.
// Installment k falls k−1 months later. A due_day past a month's end is
// that month's last day, both for the installment and for "one month after"
// (one month after 31 January is 28 February, which due_day 31 meets).
func InstallmentDueDate(downPaymentDue time.Time, k int, dueDay int) time.Time {
	y, m, d := downPaymentDue.In(SaoPaulo).Date()
	next := time.Date(y, m+1, 1, 0, 0, 0, 0, SaoPaulo) // normalises the month overflow
	lastOfNext := daysIn(next.Year(), next.Month())
	months := 1 // from the down payment's month to installment 1's
	if min(dueDay, lastOfNext) < min(d, lastOfNext) {
		months = 2
	}
	first := time.Date(y, m+time.Month(months+k-1), 1, 0, 0, 0, 0, SaoPaulo)
	day := min(dueDay, daysIn(first.Year(), first.Month()))
	return time.Date(first.Year(), first.Month(), day, 23, 59, 59, 999_000_000, SaoPaulo)
}

// daysIn returns the number of days of the month (day 0 of the next month is
// the last day of this one).
func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// calendarDaysBetween counts São Paulo calendar dates from a to b. The dates
// are compared as UTC midnights so that no offset change can shorten a day.
func calendarDaysBetween(a, b time.Time) int64 {
	utcDate := func(t time.Time) time.Time {
		y, m, d := t.In(SaoPaulo).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	}
	return int64(utcDate(b).Sub(utcDate(a)) / (24 * time.Hour))
}
