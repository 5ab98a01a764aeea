package sqldb

import (
	"testing"
	"time"

	"parcela"
)

// Migration 28 leaves every boleto this release writes as it is: first
// bills charged by boleto or by Pix (a boleto asked for on the checkout),
// installments on time and late, due every 7 hours over five years, with
// a grace of 0 to 5 business days (a review).
func TestMigration28LeavesTheBoletosThisReleaseWrites(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, parcela.SaoPaulo)
	bad := 0
	for h := 0; h < 24*365*5; h += 7 {
		due := start.Add(time.Duration(h) * time.Hour)
		for g := 0; g <= 5; g++ {
			exp := parcela.BoletoExpiry(due, g).UnixMilli()
			// first bill charged by boleto, or by Pix (checkout boleto)
			for _, eff := range []time.Time{parcela.BoletoPayableUntil(due), due} {
				b := earlyBoleto{billType: "down_payment", expires: exp, due: due.UnixMilli(), eff: eff.UnixMilli(), grace: g}
				if _, _, ok := b.mended(); ok && bad < 10 {
					bad++
					t.Errorf("first bill due %v grace %d eff %v moved", due, g, eff)
				}
			}
			// installment due at end of a day; on time and late
			idue := parcela.EndOfDay(due)
			ieff := parcela.EffectiveDueDate(idue)
			for _, d := range []time.Time{idue, parcela.BoletoPayableUntil(idue), parcela.EffectiveDueDate(parcela.EndOfDay(ieff.Add(time.Duration(1+h%96) * time.Hour)))} {
				b := earlyBoleto{billType: "installment", expires: parcela.BoletoExpiry(d, g).UnixMilli(), due: idue.UnixMilli(), eff: ieff.UnixMilli(), grace: g}
				if _, _, ok := b.mended(); ok && bad < 10 {
					bad++
					t.Errorf("installment due %v issued due %v grace %d moved", idue, d, g)
				}
			}
		}
	}
}
