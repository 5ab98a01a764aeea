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
	// Friday 23:59:59.999 in São Paulo is Saturday in UTC; it must not move.
	due := time.Date(2026, time.March, 7, 2, 59, 59, 999_000_000, time.UTC)
	got := EffectiveDueDate(due)
	if !got.Equal(due) || got.Location() != SaoPaulo {
		t.Errorf("EffectiveDueDate(%v) = %v, want the same instant in São Paulo", due, got)
	}
}

func TestInstallmentDueDate(t *testing.T) {
	jan31 := calSP(2025, time.January, 31, 15, 0, 0, 0)
	leapJan31 := calSP(2024, time.January, 31, 15, 0, 0, 0)
	// 01:00 UTC on Feb 1 is still Jan 31 in São Paulo: the charge month is January.
	utcFeb1 := time.Date(2025, time.February, 1, 1, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		charged time.Time
		k, day  int
		want    time.Time
	}{
		{"day 31 in february", jan31, 1, 31, calEndOfDay(2025, time.February, 28)},
		{"day 31 in leap february", leapJan31, 1, 31, calEndOfDay(2024, time.February, 29)},
		{"day 30 in leap february", leapJan31, 1, 30, calEndOfDay(2024, time.February, 29)},
		{"day 31 in march", jan31, 2, 31, calEndOfDay(2025, time.March, 31)},
		{"day 31 in april", jan31, 3, 31, calEndOfDay(2025, time.April, 30)},
		{"day 10 next month", jan31, 1, 10, calEndOfDay(2025, time.February, 10)},
		{"year rollover", calSP(2025, time.November, 15, 10, 0, 0, 0), 3, 5, calEndOfDay(2026, time.February, 5)},
		{"12 months later", jan31, 12, 31, calEndOfDay(2026, time.January, 31)},
		{"charge month read in São Paulo", utcFeb1, 1, 31, calEndOfDay(2025, time.February, 28)},
		{"day 1", jan31, 1, 1, calEndOfDay(2025, time.February, 1)},
	}
	for _, tt := range tests {
		got := InstallmentDueDate(tt.charged, tt.k, tt.day)
		if !got.Equal(tt.want) || got.Location() != SaoPaulo {
			t.Errorf("%s: InstallmentDueDate(%v, %d, %d) = %v, want %v", tt.name, tt.charged, tt.k, tt.day, got, tt.want)
		}
	}
}

func TestSaoPauloDate(t *testing.T) {
	got := SaoPauloDate(time.Date(2026, time.March, 7, 2, 0, 0, 0, time.UTC))
	if want := calSP(2026, time.March, 6, 0, 0, 0, 0); !got.Equal(want) || got.Location() != SaoPaulo {
		t.Errorf("SaoPauloDate = %v, want %v", got, want)
	}
}
