package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"parcela"
)

// brl, an installment's label and a plan's digest are written without fmt
// (they run for every count on every view); they must write what fmt wrote.
func TestFormatsWriteWhatFmtWrote(t *testing.T) {
	t.Parallel()
	oldBRL := func(cents int64) string {
		sign := ""
		if cents < 0 {
			sign, cents = "-", -cents
		}
		return sign + "R$\u00a0" + groupThousands(cents/100) + fmt.Sprintf(",%02d", cents%100)
	}
	for _, c := range []int64{0, 1, 9, 10, 99, 100, 101, 999, 1000, 99999, 100000, 123456789, 999999999999, -1, -100, -123456} {
		if got, want := brl(c), oldBRL(c); got != want {
			t.Errorf("brl(%d) = %q, want %q", c, got, want)
		}
	}
	if got := groupThousands(1234567); got != "1.234.567" {
		t.Errorf("groupThousands = %q", got)
	}
	due := time.Date(2026, 12, 31, 23, 59, 59, 0, parcela.SaoPaulo)
	s := parcela.Schedule{Bills: []parcela.ScheduledBill{{Number: 0, AmountCents: 39800, DueDate: due},
		{Number: 1, AmountCents: 41220, DueDate: due.AddDate(0, 1, 0)}, {Number: 2, AmountCents: 41220, DueDate: due.AddDate(0, 2, 0)},
		{Number: 3, AmountCents: 41223, DueDate: due.AddDate(0, 3, 0)}}}
	if got, want := installmentLabel(s), "4× — entrada R$\u00a0398,00 + 2× R$\u00a0412,20 + 1× R$\u00a0412,23"; got != want {
		t.Errorf("label %q, want %q", got, want)
	}
	cet := parcela.MustRate("0.431234")
	s.CETAnnualRate, s.TotalInterestCents, s.RegistrationFeeCents, s.TotalCents = &cet, 4463, 0, 163463
	h := sha256.New()
	for _, b := range s.Bills {
		fmt.Fprintf(h, "%d|%s|%d\n", b.Number, date(b.DueDate), b.AmountCents)
	}
	fmt.Fprintf(h, "cet|%s|%d|%d|%d\n", cet.String(), s.TotalInterestCents, s.RegistrationFeeCents, s.TotalCents)
	if got, want := planDigest(s), hex.EncodeToString(h.Sum(nil)[:8]); got != want {
		t.Errorf("digest %s, want %s", got, want)
	}
}

// A rate is shown with every place it has: the offer page discloses the
// interest the plan charges and its CET, and a rate rounded to two places
// of percent would show a configuration's 0.000001 (0.0001% a month) as
// no interest at all.
func TestPercentShowsTheRateExactly(t *testing.T) {
	t.Parallel()
	for rate, want := range map[string]string{"0": "0%", "0.2": "20%", "0.0199": "1,99%", "0.10": "10%", "1": "100%",
		"0.000001": "0,0001%", "0.012345": "1,2345%", "0.029999": "2,9999%", "0.426380": "42,638%",
		// A CET past 1.000% is grouped as money is: it printed "1250%".
		"12.5": "1.250%", "4095.123456": "409.512,3456%", "100000": "10.000.000%", "9.99": "999%", "10": "1.000%"} {
		if got := percent(parcela.MustRate(rate)); got != want {
			t.Errorf("percent(%s) = %q, want %q", rate, got, want)
		}
	}
}

// A whole number of days reads "3 dias", not "3 dias e 0 h": a Pix issued
// for 72 hours read so on its first view.
func TestTimeLeft(t *testing.T) {
	now := time.Date(2026, time.March, 5, 10, 0, 0, 0, parcela.SaoPaulo)
	for d, want := range map[time.Duration]string{72 * time.Hour: "3 dias", 71 * time.Hour: "2 dias e 23 h", 48 * time.Hour: "2 dias",
		47*time.Hour + 5*time.Minute: "47 h 05 min", 90 * time.Second: "1 min", 0: "expirado"} {
		if got := timeLeft(now, now.Add(d)); got != want {
			t.Errorf("timeLeft(%s) = %q, want %q", d, got, want)
		}
	}
}

// dateTimeFrom names the first whole minute from which something refused
// until t is taken: rounded down, the card rest's notice named a minute at
// which cards were still refused.
func TestDateTimeFromRoundsUp(t *testing.T) {
	t.Parallel()
	for at, want := range map[time.Time]string{
		time.Date(2027, 3, 2, 14, 5, 0, 0, parcela.SaoPaulo):         "02/03/2027 às 14:05",
		time.Date(2027, 3, 2, 14, 5, 30, 500e6, parcela.SaoPaulo):    "02/03/2027 às 14:06",
		time.Date(2027, 3, 2, 14, 5, 0, 1e6, parcela.SaoPaulo):       "02/03/2027 às 14:06",
		time.Date(2026, 12, 31, 23, 59, 59, 999e6, parcela.SaoPaulo): "01/01/2027 às 00:00",
		time.Date(2027, 3, 2, 17, 5, 30, 0, time.UTC):                "02/03/2027 às 14:06",
	} {
		if got := dateTimeFrom(at); got != want {
			t.Errorf("dateTimeFrom(%v) = %q, want %q", at, got, want)
		}
	}
}
