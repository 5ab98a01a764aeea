package parcela

import (
	"testing"
	"time"
)

// FuzzPriceTable feeds the Price table every input validation accepts (a
// principal a boleto carries, a rate in [0, 1] of at most 6 places, up to
// 119 installments, a first period of 28 to 92 days) and some it does not:
// it never panics, and what it returns amortizes the principal exactly.
func FuzzPriceTable(f *testing.F) {
	f.Add(int64(80000), "0.0299", 3, int64(36))
	f.Add(int64(1), "1", 119, int64(92))
	f.Add(int64(MaxAmountCents), "1", 1, int64(92))
	f.Add(int64(MaxAmountCents), "0.000001", 119, int64(28))
	f.Add(int64(600), "0", 47, int64(30))
	f.Add(int64(100000), "1e-61", 12, int64(30))
	f.Add(int64(100000), "1e10000", 12, int64(30))
	f.Fuzz(func(t *testing.T, principal int64, rateText string, n int, days int64) {
		rate, err := parseRate(rateText)
		var v Validation
		if err != nil || !checkRate(&v, "rate", rate, MustRate("1")) || principal < 1 || principal > MaxAmountCents ||
			n < 1 || n >= MaxInstallments || days < minFirstPeriodDays || days > 92 {
			return
		}
		amounts, err := priceTable(principal, rate, n, days)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("%v", err)
			}
			return
		}
		var amortized int64
		for k, p := range amounts.parts {
			if p.AmortizationCents < 0 || p.InterestCents < 0 {
				t.Fatalf("installment %d: %+v", k+1, p)
			}
			if k < n-1 && p.AmortizationCents+p.InterestCents != amounts.pmt {
				t.Fatalf("installment %d of %d cents, not the PMT %d", k+1, p.AmortizationCents+p.InterestCents, amounts.pmt)
			}
			amortized += p.AmortizationCents
		}
		if amortized != principal {
			t.Fatalf("amortized %d of %d", amortized, principal)
		}
	})
}

// FuzzBuildSchedule builds schedules from arbitrary input: it never panics,
// and every schedule it returns has bills a boleto can carry that sum to
// its total.
func FuzzBuildSchedule(f *testing.F) {
	f.Add(int64(100000), "0.2", "0.05", "0.0299", 4, 10, int64(1772715600), 72, true)
	f.Add(int64(MaxAmountCents), "0", "1", "1", 120, 31, int64(1798772400), 720, false)
	f.Add(int64(500), "0.99", "1", "0.000001", 2, 1, int64(0), 1, true)
	f.Add(int64(100000), "1e-61", "1e10000", "1e-61", 12, 15, int64(-62135596800), 24, true)
	f.Fuzz(func(t *testing.T, amount int64, down, fee, rate string, installments, dueDay int, unix int64, expiresHours int, percentage bool) {
		in := ScheduleInput{AmountCents: amount, Installments: installments, DueDay: dueDay, Upfront: installments == 1,
			ChargedAt: time.Unix(unix, 0), ExpiresIn: time.Duration(expiresHours) * time.Hour, DownPaymentType: DownPaymentAbsolute}
		if percentage {
			in.DownPaymentType = DownPaymentPercentage
		}
		var err error
		if in.DownPaymentValue, err = parseRate(down); err != nil {
			return
		}
		if in.RegistrationFee, err = parseRate(fee); err != nil {
			return
		}
		if in.InterestRate, err = parseRate(rate); err != nil {
			return
		}
		if y := in.ChargedAt.Year(); y < 1900 || y > 2200 || expiresHours < 0 || expiresHours > 720 {
			return // outside any clock parcela runs on
		}
		s, err := BuildSchedule(in)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("%v", err)
			}
			return
		}
		var total int64
		for _, b := range s.Bills {
			if b.AmountCents < 1 || b.AmountCents > MaxAmountCents {
				t.Fatalf("a bill of %d cents", b.AmountCents)
			}
			total += b.AmountCents
		}
		if total != s.TotalCents || len(s.Bills) != installments {
			t.Fatalf("total %d of %d bills, schedule says %d of %d", total, len(s.Bills), s.TotalCents, installments)
		}
	})
}
