package parcela

import (
	"sort"
	"time"

	// Embedded so due dates do not depend on the host's zoneinfo files.
	_ "time/tzdata"
)

// SaoPaulo is the zone every due date is rendered and reasoned in: the
// customer's calendar day decides when a bill is due and when it is late.
var SaoPaulo *time.Location = mustLoadLocation("America/Sao_Paulo")

func mustLoadLocation(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic("parcela: loading time zone " + name + ": " + err.Error())
	}
	return loc
}

// SaoPauloDate returns midnight, São Paulo time, of t's São Paulo calendar date.
func SaoPauloDate(t time.Time) time.Time {
	y, m, d := t.In(SaoPaulo).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, SaoPaulo)
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

// NationalHolidays lists the Brazilian national bank holidays of year as
// São Paulo midnights, sorted. Only days on which banks do not settle count;
// state and municipal holidays are out of scope.
func NationalHolidays(year int) []time.Time {
	date := func(m time.Month, d int) time.Time { return time.Date(year, m, d, 0, 0, 0, 0, SaoPaulo) }
	days := []time.Time{
		date(time.January, 1),   // Confraternização Universal
		date(time.April, 21),    // Tiradentes
		date(time.May, 1),       // Dia do Trabalho
		date(time.September, 7), // Independência
		date(time.October, 12),  // Nossa Senhora Aparecida
		date(time.November, 2),  // Finados
		date(time.November, 15), // Proclamação da República
		date(time.December, 25), // Natal
	}
	if year >= 2024 { // Consciência Negra became national by Lei 14.759/2023.
		days = append(days, date(time.November, 20))
	}
	easter := Easter(year)
	for _, offset := range []int{-48, -47, -2, 60} { // Carnival Mon/Tue, Good Friday, Corpus Christi
		days = append(days, easter.AddDate(0, 0, offset))
	}
	sort.Slice(days, func(i, j int) bool { return days[i].Before(days[j]) })
	return days
}

// IsBusinessDay reports whether day's São Paulo calendar date is neither a
// weekend nor a national bank holiday.
func IsBusinessDay(day time.Time) bool {
	date := SaoPauloDate(day)
	if wd := date.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	for _, h := range NationalHolidays(date.Year()) {
		if h.Equal(date) {
			return false
		}
	}
	return true
}

// EffectiveDueDate moves due to the next business day when it falls on a
// weekend or holiday, keeping its São Paulo time of day: a bill due on a day
// banks are closed can be paid on the next day they open without penalty.
func EffectiveDueDate(due time.Time) time.Time {
	t := due.In(SaoPaulo)
	for !IsBusinessDay(t) {
		y, m, d := t.Date()
		// Rebuild from the wall clock rather than adding 24h, so the local
		// time of day survives any UTC offset change on the way.
		t = time.Date(y, m, d+1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), SaoPaulo)
	}
	return t
}

// InstallmentDueDate is the due date of installment k (1-based): due_day of
// the k-th month after chargedAt's São Paulo month, at 23:59:59.999 local
// time, with due_day clamped to the last day of shorter months.
func InstallmentDueDate(chargedAt time.Time, k int, dueDay int) time.Time {
	y, m, _ := chargedAt.In(SaoPaulo).Date()
	first := time.Date(y, m+time.Month(k), 1, 0, 0, 0, 0, SaoPaulo) // normalises the month overflow
	day := min(dueDay, daysIn(first.Year(), first.Month()))
	return time.Date(first.Year(), first.Month(), day, 23, 59, 59, 999_000_000, SaoPaulo)
}

// daysIn returns the number of days of the month (day 0 of the next month is
// the last day of this one).
func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
