package brcode

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // São Paulo's past daylight saving, whatever the host has
)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// Published boleto examples (linha digitável + barcode from the same source).
var publishedBoletos = []struct{ source, linha, barcode string }{
	{
		// Stark Bank API reference, BoletoPayment "line" / "barCode"
		// examples (https://starkbank.com/docs/api, repeated in the
		// github.com/starkbank/sdk-* clients): an Itaú (341) boleto.
		source:  "Stark Bank API docs",
		linha:   "34191.09008 63571.277308 71444.640008 5 81960000000062",
		barcode: "34195819600000000621090063571277307144464000",
	},
	{
		// README of github.com/Tagliatti/Boleto-Validator-PHP, example of a
		// valid "linha digitalizável" (bank 422, Safra). The barcode is the
		// FEBRABAN rearrangement of that linha.
		source:  "Tagliatti/Boleto-Validator-PHP README",
		linha:   "42297.11504 00001.954411 60020.034520 2 68610000054659",
		barcode: "42292686100000546597115000001954416002003452",
	},
}

func TestPublishedBoletos(t *testing.T) {
	for _, ex := range publishedBoletos {
		bc, err := ParseLinhaDigitavel(ex.linha)
		if err != nil || bc != ex.barcode {
			t.Errorf("%s: ParseLinhaDigitavel = %q, %v; want %q", ex.source, bc, err, ex.barcode)
		}
		if err := ValidateBarcode(ex.barcode); err != nil {
			t.Errorf("%s: ValidateBarcode: %v", ex.source, err)
		}
		if got := FormatLinhaDigitavel(linhaFromBarcode(ex.barcode)); got != ex.linha {
			t.Errorf("%s: linha from barcode = %q, want %q", ex.source, got, ex.linha)
		}
	}
}

// Rebuilds the Stark Bank example from its parts, so Barcode() itself (not
// just the parser) is pinned to a published code.
func TestBoletoFromPartsMatchesPublished(t *testing.T) {
	b := Boleto{BankCode: "341", CurrencyCode: '9', DueDate: date(2020, 3, 16), AmountCents: 62,
		FreeField: "1090063571277307144464000"}
	bc, err := b.Barcode()
	if err != nil || bc != "34195819600000000621090063571277307144464000" {
		t.Fatalf("Barcode = %q, %v", bc, err)
	}
	l, err := b.LinhaDigitavel()
	if err != nil || FormatLinhaDigitavel(l) != "34191.09008 63571.277308 71444.640008 5 81960000000062" {
		t.Fatalf("LinhaDigitavel = %q, %v", l, err)
	}
}

func TestDueFactor(t *testing.T) {
	saoPaulo := time.FixedZone("BRT", -3*3600)
	cases := []struct {
		when time.Time
		want string
	}{
		{date(1997, 10, 7), "0000"},
		{date(2000, 7, 3), "1000"},
		// Banco do Brasil factor table, as reproduced in
		// http://mhemann.com.br/2011/06/a-linha-digitavel-do-boleto-bancario/
		{date(2000, 7, 5), "1002"},
		{date(2002, 5, 1), "1667"},
		{date(2010, 11, 17), "4789"},
		{date(2016, 7, 20), "6861"}, // Tagliatti example above
		{date(2020, 3, 16), "8196"}, // Stark Bank example above
		{date(2025, 2, 21), "9999"},
		// FEBRABAN reset: back to 1000 on 2025-02-22.
		{date(2025, 2, 22), "1000"},
		{date(2025, 2, 23), "1001"},
		{date(2025, 2, 22).AddDate(0, 0, 8999), "9999"},
		{date(2025, 2, 22).AddDate(0, 0, 9000), "1000"},
		// The calendar date in the time's own zone counts, not UTC.
		{time.Date(2025, 2, 22, 23, 30, 0, 0, saoPaulo), "1000"},
		{time.Date(2025, 2, 21, 23, 59, 0, 0, saoPaulo), "9999"},
	}
	for _, c := range cases {
		if got, err := DueFactor(c.when); err != nil || got != c.want {
			t.Errorf("DueFactor(%s) = %q, %v; want %q", c.when, got, err, c.want)
		}
	}
	if _, err := DueFactor(date(1997, 10, 6)); !errors.Is(err, ErrFormat) {
		t.Errorf("date before base: err = %v", err)
	}
}

func TestDueDateFromFactor(t *testing.T) {
	cases := []struct {
		factor    int
		reference time.Time
		want      time.Time
	}{
		{1000, date(2001, 1, 1), date(2000, 7, 3)},
		{1000, date(2025, 3, 1), date(2025, 2, 22)},
		{9999, date(2025, 3, 1), date(2025, 2, 21)},
		{1001, date(2025, 3, 1), date(2025, 2, 23)},
		{8196, date(2020, 1, 1), date(2020, 3, 16)},
		{4789, date(2011, 1, 1), date(2010, 11, 17)},
		{4789, date(2037, 1, 1), date(2035, 7, 9)}, // second cycle: 2025-02-22 + 3789 days
		{0, date(2025, 1, 1), time.Time{}},
		{10000, date(2025, 1, 1), time.Time{}},
	}
	for _, c := range cases {
		if got := DueDateFromFactor(c.factor, c.reference); !got.Equal(c.want) {
			t.Errorf("DueDateFromFactor(%d, %s) = %s, want %s", c.factor, c.reference.Format(time.DateOnly), got, c.want)
		}
	}
	// Round trip over four decades: the nearest cycle is the right one.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		due := date(2000, 7, 3).AddDate(0, 0, rng.IntN(40*365))
		f, _ := DueFactor(due)
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil {
			t.Fatalf("factor %q: %v", f, err)
		}
		ref := due.AddDate(0, 0, rng.IntN(2000)-1000) // read within ±1000 days
		if got := DueDateFromFactor(n, ref); !got.Equal(due) {
			t.Fatalf("factor %s of %s read on %s gave %s", f, due, ref, got)
		}
	}
}

func TestBoletoRejectsBadInput(t *testing.T) {
	ok := Boleto{BankCode: "341", CurrencyCode: '9', DueDate: date(2026, 1, 10), AmountCents: 100, FreeField: "1090063571277307144464000"}
	bad := []func(b *Boleto){
		func(b *Boleto) { b.BankCode = "34" },
		func(b *Boleto) { b.BankCode = "34a" },
		func(b *Boleto) { b.CurrencyCode = 'R' },
		func(b *Boleto) { b.AmountCents = MaxAmountCents + 1 },
		func(b *Boleto) { b.AmountCents = -1 },
		func(b *Boleto) { b.FreeField = "123" },
		func(b *Boleto) { b.DueDate = date(1990, 1, 1) },
	}
	if _, err := ok.Barcode(); err != nil {
		t.Fatal(err)
	}
	for i, mutate := range bad {
		b := ok
		mutate(&b)
		if _, err := b.Barcode(); !errors.Is(err, ErrFormat) {
			t.Errorf("case %d: err = %v, want ErrFormat", i, err)
		}
	}
	b := ok
	b.AmountCents = MaxAmountCents
	if bc, err := b.Barcode(); err != nil || bc[9:19] != "9999999999" {
		t.Errorf("max amount: %q, %v", bc, err)
	}
}

func randomBoleto(rng *rand.Rand) Boleto {
	free := make([]byte, 25)
	for i := range free {
		free[i] = byte('0' + rng.IntN(10))
	}
	return Boleto{
		BankCode:     fmt.Sprintf("%03d", rng.IntN(1000)),
		CurrencyCode: '9',
		DueDate:      date(2000, 7, 3).AddDate(0, 0, rng.IntN(20000)),
		AmountCents:  rng.Int64N(MaxAmountCents + 1),
		FreeField:    string(free),
	}
}

func TestBoletoRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range 5000 {
		b := randomBoleto(rng)
		bc, err := b.Barcode()
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateBarcode(bc); err != nil {
			t.Fatalf("%s: %v", bc, err)
		}
		l, err := b.LinhaDigitavel()
		if err != nil || len(l) != 47 {
			t.Fatalf("linha %q, %v", l, err)
		}
		for _, in := range []string{l, FormatLinhaDigitavel(l)} {
			if got, err := ParseLinhaDigitavel(in); err != nil || got != bc {
				t.Fatalf("ParseLinhaDigitavel(%q) = %q, %v; want %q", in, got, err, bc)
			}
		}
	}
}

// Every single-digit substitution anywhere in the linha must be caught.
// Fields 1–3 are covered by their mod-10 digits (which catch any single
// substitution); field 5 only by the general DV, whose rule folds the
// mod-11 results 0, 10 and 11 into "1". A code whose DV is 1 can therefore
// miss some changes, so the exhaustive check uses the Stark Bank code (DV 5).
func TestSingleDigitErrorsDetected(t *testing.T) {
	linha := NormalizeDigits(publishedBoletos[0].linha)
	for pos := range len(linha) {
		for d := byte('0'); d <= '9'; d++ {
			if linha[pos] == d {
				continue
			}
			typo := linha[:pos] + string(d) + linha[pos+1:]
			if bc, err := ParseLinhaDigitavel(typo); !errors.Is(err, ErrCheckDigit) {
				t.Errorf("position %d → %c accepted: %q, %v", pos+1, d, bc, err)
			}
		}
	}
	for pos := range 44 {
		bc := publishedBoletos[0].barcode
		typo := bc[:pos] + string('0'+(bc[pos]-'0'+1)%10) + bc[pos+1:]
		if ValidateBarcode(typo) == nil {
			t.Errorf("barcode with position %d changed accepted", pos+1)
		}
	}
}

func TestParseLinhaDigitavelFormat(t *testing.T) {
	for _, in := range []string{"", "3419109008", "34191.09008 63571.277308 71444.640008 5 8196000000006x", publishedBoletos[0].barcode} {
		if _, err := ParseLinhaDigitavel(in); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseLinhaDigitavel(%q) err = %v, want ErrFormat", in, err)
		}
	}
	if got := FormatLinhaDigitavel("123"); got != "123" {
		t.Errorf("FormatLinhaDigitavel of short input = %q", got)
	}
}

func TestFreeField(t *testing.T) {
	ff, err := FreeField("0123", "4567", "89")
	if err != nil || ff != "101"+"00000004567"+"0123"+"0000089" || len(ff) != 25 {
		t.Fatalf("FreeField = %q, %v", ff, err)
	}
	if ff, err := FreeField("9999", "99999999999", "9999999"); err != nil || ff != "101"+strings.Repeat("9", 22) {
		t.Errorf("full-width FreeField = %q, %v", ff, err)
	}
	bad := [][3]string{
		{"123", "1", "1"}, {"12345", "1", "1"}, {"12a4", "1", "1"},
		{"1234", "", "1"}, {"1234", "123456789012", "1"}, {"1234", "12-3", "1"},
		{"1234", "1", ""}, {"1234", "1", "12345678"}, {"1234", "1", "1234-5"},
	}
	for _, c := range bad {
		if _, err := FreeField(c[0], c[1], c[2]); !errors.Is(err, ErrFormat) {
			t.Errorf("FreeField(%q, %q, %q) err = %v", c[0], c[1], c[2], err)
		}
	}
}

// A due date on a day whose midnight daylight saving skipped (São Paulo,
// 4 November 2018) is that day's first instant, 01:00: time.Date's
// midnight was 23:00 of the day before, and a boleto due on the Sunday
// showed Saturday's date to its payer.
func TestDueDateFromFactorOnADayWithoutMidnight(t *testing.T) {
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	due := time.Date(2018, 11, 4, 12, 0, 0, 0, sp)
	f, _ := DueFactor(due)
	var n int
	if _, err := fmt.Sscan(f, &n); err != nil {
		t.Fatal(err)
	}
	got := DueDateFromFactor(n, time.Date(2018, 11, 1, 10, 0, 0, 0, sp))
	if want := time.Date(2018, 11, 4, 3, 0, 0, 0, time.UTC); !got.Equal(want) || got.Day() != 4 {
		t.Errorf("DueDateFromFactor(%d) read in São Paulo = %s, want %s (01:00, the day's first instant)", n, got, want.In(sp))
	}
}
