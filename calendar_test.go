package parcela

import (
	"testing"
	"time"
)

// calSP builds a São Paulo wall-clock time.
func calSP(y int, m time.Month, d, h, mi, s, ms int) time.Time {
	return time.Date(y, m, d, h, mi, s, ms*int(time.Millisecond), SaoPaulo)
}

// calEndOfDay is the time of day installments fall due.
func calEndOfDay(y int, m time.Month, d int) time.Time { return calSP(y, m, d, 23, 59, 59, 999) }

func TestEaster(t *testing.T) {
	t.Parallel()
	known := map[int]string{
		1961: "1961-04-02",
		2000: "2000-04-23",
		2019: "2019-04-21",
		2024: "2024-03-31",
		2025: "2025-04-20",
		2026: "2026-04-05",
		2027: "2027-03-28",
		2038: "2038-04-25", // latest possible date
		2285: "2285-03-22", // earliest possible date
	}
	for year, want := range known {
		got := Easter(year)
		if got.Format(time.DateOnly) != want || got.Location() != SaoPaulo || got.Hour() != 0 {
			t.Errorf("Easter(%d) = %v, want %s midnight São Paulo", year, got, want)
		}
	}
}

func TestNationalHolidays2026(t *testing.T) {
	t.Parallel()
	want := []string{
		"2026-01-01", // Confraternização Universal
		"2026-02-16", // Carnival Monday
		"2026-02-17", // Carnival Tuesday
		"2026-04-03", // Good Friday
		"2026-04-21", // Tiradentes
		"2026-05-01", // Labour Day
		"2026-06-04", // Corpus Christi
		"2026-09-07", // Independence
		"2026-10-12", // Aparecida
		"2026-11-02", // All Souls
		"2026-11-15", // Republic
		"2026-11-20", // Consciência Negra
		"2026-12-25", // Christmas
		"2026-12-31", // no settlement
	}
	got := NationalHolidays(2026)
	if len(got) != len(want) {
		t.Fatalf("NationalHolidays(2026) has %d days, want %d: %v", len(got), len(want), got)
	}
	for i, d := range got {
		if d.Format(time.DateOnly) != want[i] || !d.Equal(SaoPauloDate(d)) {
			t.Errorf("holiday %d = %v, want %s midnight São Paulo", i, d, want[i])
		}
	}
}

func TestHolidaysConscienciaNegraOnlyFrom2024(t *testing.T) {
	t.Parallel()
	has := func(year int) bool {
		for _, d := range NationalHolidays(year) {
			if d.Month() == time.November && d.Day() == 20 {
				return true
			}
		}
		return false
	}
	if has(2023) || !has(2024) || !has(2030) {
		t.Errorf("Nov 20 holiday: 2023=%v 2024=%v 2030=%v, want false true true", has(2023), has(2024), has(2030))
	}
}

func TestIsBusinessDay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		day  time.Time
		want bool
	}{
		{"weekday", calSP(2026, time.March, 10, 12, 0, 0, 0), true},
		{"saturday", calSP(2026, time.March, 7, 12, 0, 0, 0), false},
		{"sunday", calSP(2026, time.March, 8, 12, 0, 0, 0), false},
		{"carnival tuesday", calSP(2026, time.February, 17, 9, 0, 0, 0), false},
		{"ash wednesday opens", calSP(2026, time.February, 18, 9, 0, 0, 0), true},
		{"nov 20 2023 was a business day", calSP(2023, time.November, 20, 9, 0, 0, 0), true},
		// 02:30 UTC on Saturday is still Friday evening in São Paulo (UTC-3).
		{"UTC saturday, São Paulo friday", time.Date(2026, time.March, 7, 2, 30, 0, 0, time.UTC), true},
		{"UTC friday night, São Paulo still friday", time.Date(2026, time.March, 6, 23, 0, 0, 0, time.UTC), true},
		{"UTC monday 01:00, São Paulo sunday", time.Date(2026, time.March, 9, 1, 0, 0, 0, time.UTC), false},
	}
	for _, tt := range tests {
		if got := IsBusinessDay(tt.day); got != tt.want {
			t.Errorf("%s: IsBusinessDay(%v) = %v, want %v", tt.name, tt.day, got, tt.want)
		}
	}
}

func TestEffectiveDueDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		due      time.Time
		wantDate string
	}{
		{"business day unchanged", calEndOfDay(2026, time.March, 10), "2026-03-10"},
		{"saturday to monday", calEndOfDay(2026, time.March, 7), "2026-03-09"},
		{"sunday to monday", calEndOfDay(2026, time.March, 8), "2026-03-09"},
		{"carnival saturday to ash wednesday", calEndOfDay(2026, time.February, 14), "2026-02-18"},
		{"carnival monday to ash wednesday", calEndOfDay(2026, time.February, 16), "2026-02-18"},
		{"good friday to monday", calEndOfDay(2026, time.April, 3), "2026-04-06"},
		{"good friday then tiradentes monday", calEndOfDay(2025, time.April, 18), "2025-04-22"},
		{"corpus christi thursday to friday", calEndOfDay(2026, time.June, 4), "2026-06-05"},
		{"labour day friday to monday", calEndOfDay(2026, time.May, 1), "2026-05-04"},
		{"nov 20 2026 friday to monday", calEndOfDay(2026, time.November, 20), "2026-11-23"},
		{"christmas friday to monday", calEndOfDay(2026, time.December, 25), "2026-12-28"},
		{"new year thursday to friday", calEndOfDay(2026, time.January, 1), "2026-01-02"},
		{"nov 20 2023 not yet a holiday", calEndOfDay(2023, time.November, 20), "2023-11-20"},
		{"dec 31 thursday, jan 1, weekend: monday", calEndOfDay(2026, time.December, 31), "2027-01-04"},
		{"dec 31 tuesday to jan 2", calEndOfDay(2024, time.December, 31), "2025-01-02"},
		{"dec 30 2026 is a business day", calEndOfDay(2026, time.December, 30), "2026-12-30"},
	}
	for _, tt := range tests {
		got := EffectiveDueDate(tt.due)
		if got.Location() != SaoPaulo || got.Format(time.DateOnly) != tt.wantDate {
			t.Errorf("%s: EffectiveDueDate(%v) = %v, want %s", tt.name, tt.due, got, tt.wantDate)
		}
		if h, m, s := got.Clock(); h != 23 || m != 59 || s != 59 || got.Nanosecond() != 999_000_000 {
			t.Errorf("%s: time of day not kept: %v", tt.name, got)
		}
	}
}

func TestEffectiveDueDateReadsSaoPauloDate(t *testing.T) {
	t.Parallel()
	// Friday 23:59:59.999 in São Paulo is Saturday in UTC; it must not move.
	due := time.Date(2026, time.March, 7, 2, 59, 59, 999_000_000, time.UTC)
	got := EffectiveDueDate(due)
	if !got.Equal(due) || got.Location() != SaoPaulo {
		t.Errorf("EffectiveDueDate(%v) = %v, want the same instant in São Paulo", due, got)
	}
}

func TestInstallmentDueDate(t *testing.T) {
	t.Parallel()
	// 01:00 UTC on 1 Feb is still 31 Jan in São Paulo.
	utcFeb1 := time.Date(2025, time.February, 1, 1, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		down   time.Time // the down payment's due date
		k, day int
		want   time.Time
	}{
		{"due day after the one-month mark", calSP(2026, time.March, 8, 10, 0, 0, 0), 1, 10, calEndOfDay(2026, time.April, 10)},
		{"due day on the one-month mark", calSP(2026, time.March, 10, 10, 0, 0, 0), 1, 10, calEndOfDay(2026, time.April, 10)},
		{"due day before the one-month mark moves a month on", calSP(2026, time.March, 8, 10, 0, 0, 0), 1, 5, calEndOfDay(2026, time.May, 5)},
		{"due day 1 near the month's end", calSP(2026, time.March, 30, 23, 0, 0, 0), 1, 1, calEndOfDay(2026, time.May, 1)},
		{"due day 1 on the first", calSP(2026, time.March, 1, 9, 0, 0, 0), 1, 1, calEndOfDay(2026, time.April, 1)},
		{"31 in february", calSP(2025, time.January, 31, 15, 0, 0, 0), 1, 31, calEndOfDay(2025, time.February, 28)},
		{"31 in leap february", calSP(2024, time.January, 31, 15, 0, 0, 0), 1, 31, calEndOfDay(2024, time.February, 29)},
		{"30 in leap february", calSP(2024, time.January, 30, 15, 0, 0, 0), 1, 30, calEndOfDay(2024, time.February, 29)},
		{"one month after 31 january is 28 february, which 28 meets", calSP(2025, time.January, 31, 15, 0, 0, 0), 1, 28, calEndOfDay(2025, time.February, 28)},
		{"27 falls before 28 february", calSP(2025, time.January, 31, 15, 0, 0, 0), 1, 27, calEndOfDay(2025, time.March, 27)},
		{"31 then the last day of shorter months", calSP(2025, time.January, 31, 15, 0, 0, 0), 3, 31, calEndOfDay(2025, time.April, 30)},
		{"december to january", calSP(2025, time.December, 10, 10, 0, 0, 0), 1, 15, calEndOfDay(2026, time.January, 15)},
		{"december to february", calSP(2025, time.December, 20, 10, 0, 0, 0), 1, 15, calEndOfDay(2026, time.February, 15)},
		{"31 december, due day 1", calSP(2026, time.December, 31, 10, 0, 0, 0), 1, 1, calEndOfDay(2027, time.February, 1)},
		{"year rollover of later installments", calSP(2025, time.November, 3, 10, 0, 0, 0), 3, 5, calEndOfDay(2026, time.February, 5)},
		{"12 months later", calSP(2025, time.January, 31, 15, 0, 0, 0), 12, 31, calEndOfDay(2026, time.January, 31)},
		{"down payment's date read in São Paulo", utcFeb1, 1, 31, calEndOfDay(2025, time.February, 28)},
		// A 30-day expiry charged on 1 March is due on 31 March: installment 1
		// waits for the end of April.
		{"long expiry", calSP(2026, time.March, 1, 10, 0, 0, 0).Add(720 * time.Hour), 1, 30, calEndOfDay(2026, time.April, 30)},
		{"long expiry, due day 1", calSP(2026, time.March, 1, 10, 0, 0, 0).Add(720 * time.Hour), 1, 1, calEndOfDay(2026, time.May, 1)},
	}
	for _, tt := range tests {
		got := InstallmentDueDate(tt.down, tt.k, tt.day)
		if !got.Equal(tt.want) || got.Location() != SaoPaulo {
			t.Errorf("%s: InstallmentDueDate(%v, %d, %d) = %v, want %v", tt.name, tt.down, tt.k, tt.day, got, tt.want)
		}
		if tt.k == 1 && !got.After(tt.down) {
			t.Errorf("%s: installment 1 due %v, not after the down payment %v", tt.name, got, tt.down)
		}
	}
}

func TestFirstInstallmentNeverBeforeTheDownPayment(t *testing.T) {
	t.Parallel()
	// Every due day, every day of four years, the longest expiry: installment
	// 1 is at least 28 days (a February) after the down payment, and due day
	// d of the month before it would have been less than a month after.
	for day := calSP(2024, time.January, 1, 12, 0, 0, 0); day.Year() < 2028; day = day.AddDate(0, 0, 1) {
		for _, expires := range []time.Duration{time.Hour, 72 * time.Hour, 720 * time.Hour} {
			down := day.Add(expires)
			for dueDay := 1; dueDay <= 31; dueDay++ {
				first := InstallmentDueDate(down, 1, dueDay)
				if days := calendarDaysBetween(down, first); days < 28 || days > 62 {
					t.Fatalf("down payment %v, due day %d: installment 1 on %v, %d days later", down, dueDay, first, days)
				}
			}
		}
	}
}

func TestBoletoExpiry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		due   time.Time
		grace int
		want  time.Time
	}{
		// The millisecond after the end of its last payable day, the grace's
		// last with grace.
		{"weekday, no grace: end of its day", calSP(2026, time.March, 10, 9, 30, 0, 0), 0, calSP(2026, time.March, 11, 0, 0, 0, 0)},
		{"weekday, one business day of grace", calSP(2026, time.March, 10, 9, 30, 0, 0), 1, calEndOfDay(2026, time.March, 11).Add(time.Millisecond)},
		{"friday, grace over the weekend", calSP(2026, time.March, 13, 9, 30, 0, 0), 1, calEndOfDay(2026, time.March, 16).Add(time.Millisecond)},
		{"saturday: payable monday, grace tuesday", calSP(2026, time.March, 7, 18, 0, 0, 0), 1, calEndOfDay(2026, time.March, 10).Add(time.Millisecond)},
		{"sunday, no grace: monday", calSP(2026, time.March, 8, 18, 0, 0, 0), 0, calSP(2026, time.March, 10, 0, 0, 0, 0)},
		{"carnival saturday: ash wednesday, grace thursday", calSP(2026, time.February, 14, 10, 0, 0, 0), 1, calEndOfDay(2026, time.February, 19).Add(time.Millisecond)},
		{"good friday then tiradentes", calSP(2025, time.April, 17, 10, 0, 0, 0), 1, calEndOfDay(2025, time.April, 22).Add(time.Millisecond)},
		{"month end: friday 31 july, grace monday 3 august", calSP(2026, time.July, 31, 10, 0, 0, 0), 1, calEndOfDay(2026, time.August, 3).Add(time.Millisecond)},
		{"30 december 2026, grace over 31 december and new year", calSP(2026, time.December, 30, 10, 0, 0, 0), 1, calEndOfDay(2027, time.January, 4).Add(time.Millisecond)},
		{"31 december 2026: payable 4 january, grace 5th", calSP(2026, time.December, 31, 10, 0, 0, 0), 1, calEndOfDay(2027, time.January, 5).Add(time.Millisecond)},
		{"31 december 2024: payable 2 january, grace 3rd", calSP(2024, time.December, 31, 10, 0, 0, 0), 1, calEndOfDay(2025, time.January, 3).Add(time.Millisecond)},
		{"five days of grace", calSP(2026, time.March, 10, 9, 30, 0, 0), 5, calEndOfDay(2026, time.March, 17).Add(time.Millisecond)},
		// 01:30 UTC on Saturday is Friday 22:30 in São Paulo: Friday is the due day.
		{"due date read in São Paulo", time.Date(2026, time.March, 7, 1, 30, 0, 0, time.UTC), 0, calSP(2026, time.March, 7, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		got := BoletoExpiry(tt.due, tt.grace)
		if !got.Equal(tt.want) || got.Location() != SaoPaulo {
			t.Errorf("%s: BoletoExpiry(%v, %d) = %v, want %v", tt.name, tt.due, tt.grace, got, tt.want)
		}
		if p := PaymentExpiry(MethodBoleto, tt.due, tt.grace); !p.Equal(got) {
			t.Errorf("%s: PaymentExpiry(boleto) = %v, want %v", tt.name, p, got)
		}
	}
	// Pix keeps its exact expiry, weekend or not.
	due := calSP(2026, time.March, 7, 18, 0, 0, 0)
	if got := PaymentExpiry(MethodPix, due, 1); !got.Equal(due) {
		t.Errorf("PaymentExpiry(pix) = %v, want %v", got, due)
	}
}

func TestBoletoExpiresOnlyAfterItsLastPayableDay(t *testing.T) {
	t.Parallel()
	// A down payment boleto due Saturday 7 March 2026 at 18:00, with one
	// business day of grace: the clock moves through the weekend, Monday
	// (the day it is payable) and Tuesday (the bank's notice) before it
	// expires.
	due := calSP(2026, time.March, 7, 18, 0, 0, 0)
	clock := NewTestClock(due)
	expiry := BoletoExpiry(due, 1)
	for _, step := range []struct {
		advance time.Duration
		expired bool
	}{
		{time.Minute, false},     // Saturday 18:01: a Pix would have expired
		{30 * time.Hour, false},  // Monday 00:01
		{24 * time.Hour, false},  // Tuesday 00:01
		{23 * time.Hour, false},  // Tuesday 23:01
		{59 * time.Minute, true}, // Wednesday 00:00
	} {
		clock.Advance(step.advance)
		boleto := &Payment{Method: MethodBoleto, ExpiresAt: expiry}
		if got := !boleto.settlesAt(clock.Now()); got != step.expired {
			t.Errorf("at %v: expired = %v, want %v (expiry %v)", clock.Now(), got, step.expired, expiry)
		}
	}
}

func TestAddBusinessDays(t *testing.T) {
	t.Parallel()
	friday := calSP(2026, time.March, 13, 15, 4, 5, 6)
	for n, want := range []time.Time{friday, calSP(2026, time.March, 16, 15, 4, 5, 6), calSP(2026, time.March, 17, 15, 4, 5, 6)} {
		if got := AddBusinessDays(friday, n); !got.Equal(want) {
			t.Errorf("AddBusinessDays(friday, %d) = %v, want %v", n, got, want)
		}
	}
}

func TestSaoPauloDate(t *testing.T) {
	t.Parallel()
	got := SaoPauloDate(time.Date(2026, time.March, 7, 2, 0, 0, 0, time.UTC))
	if want := calSP(2026, time.March, 6, 0, 0, 0, 0); !got.Equal(want) || got.Location() != SaoPaulo {
		t.Errorf("SaoPauloDate = %v, want %v", got, want)
	}
	// Daylight saving began at midnight on Tuesday 2 November 2004
	// (Finados, a holiday): the date is that day, not Monday's 23:00, and
	// a boleto due then is payable until Wednesday's end (an audit).
	due := time.Date(2004, time.November, 2, 16, 30, 0, 0, SaoPaulo)
	if got := SaoPauloDate(due); got.In(SaoPaulo).Day() != 2 {
		t.Errorf("SaoPauloDate(%v) = %v, a day before", due, got)
	}
	if got, want := BoletoPayableUntil(due), EndOfDay(time.Date(2004, time.November, 3, 12, 0, 0, 0, SaoPaulo)); !got.Equal(want) {
		t.Errorf("BoletoPayableUntil(%v) = %v, want %v", due, got, want)
	}
	if got := EffectiveDueDate(due); got.Before(due) {
		t.Errorf("EffectiveDueDate(%v) = %v, before it", due, got)
	}
}

func TestStartOfDay(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		y    int
		m    time.Month
		d    int
		want string
	}{
		{2026, time.December, 31, "2026-12-31T00:00:00-03:00"},
		{2018, time.November, 4, "2018-11-04T01:00:00-02:00"}, // daylight saving began at midnight
		{2017, time.October, 15, "2017-10-15T01:00:00-02:00"},
		{2018, time.November, 3, "2018-11-03T00:00:00-03:00"},
		{2019, time.February, 16, "2019-02-16T00:00:00-02:00"}, // it ended at the next midnight: 23:00 came twice
		{2019, time.February, 17, "2019-02-17T00:00:00-03:00"},
	} {
		got := StartOfDay(tt.y, tt.m, tt.d)
		if s := got.Format(time.RFC3339); s != tt.want {
			t.Errorf("StartOfDay(%d-%02d-%02d) = %s, want %s", tt.y, tt.m, tt.d, s, tt.want)
		}
		if y, m, d := got.In(SaoPaulo).Date(); y != tt.y || m != tt.m || d != tt.d || got.Add(-time.Millisecond).In(SaoPaulo).Day() == tt.d {
			t.Errorf("StartOfDay(%d-%02d-%02d) = %s is not the day's first instant", tt.y, tt.m, tt.d, got)
		}
	}
}

// Daylight saving began at midnight on 2 November 2004, Finados, a
// Tuesday: that day's São Paulo midnight does not exist, and read as 23:00
// of Monday 1 November it made the Monday the holiday as well, so a bill
// due on it was due on Wednesday 3 November.
func TestHolidayOnADayDaylightSavingBegan(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		day  time.Time
		want bool
	}{
		{calSP(2004, time.November, 1, 12, 0, 0, 0), true},
		{calSP(2004, time.November, 2, 12, 0, 0, 0), false},
		{calSP(2004, time.November, 3, 12, 0, 0, 0), true},
	} {
		if got := IsBusinessDay(tt.day); got != tt.want {
			t.Errorf("IsBusinessDay(%v) = %v, want %v", tt.day, got, tt.want)
		}
	}
	for _, h := range NationalHolidays(2004) {
		if y, m, d := h.In(SaoPaulo).Date(); h.Month() == time.November && d < 5 && (y != 2004 || m != time.November || d != 2) {
			t.Errorf("a holiday of early November 2004 falls on %v, want 2 November", h)
		}
	}
	due := calEndOfDay(2004, time.October, 30) // a Saturday
	if got, want := EffectiveDueDate(due), calEndOfDay(2004, time.November, 1); !got.Equal(want) {
		t.Errorf("EffectiveDueDate(%v) = %v, want %v", due, got, want)
	}
}

// A customer born today is refused on a day daylight saving began at
// midnight too: the birthdate read as 23:00 of the day before, and the
// day's first instant (01:00) counted it as past (a review).
func TestBornTodayOnADaylightSavingStart(t *testing.T) {
	t.Parallel()
	now := time.Date(2004, 11, 2, 10, 0, 0, 0, SaoPaulo)
	for birth, refused := range map[string]bool{"2004-11-02": true, "2004-11-01": false} {
		_, err := BuildOrder(orderRequest(t, map[string]any{"customer_birthdate": birth}), now)
		e, ok := err.(*Error)
		got := ok && len(e.Fields) > 0 && e.Fields[0].Field == "order.customer_birthdate"
		if got != refused {
			t.Errorf("born %s, on 2004-11-02: refused %v (%v), want %v", birth, got, err, refused)
		}
	}
}
