package sqldb_test

import (
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
)

// A bill takes CardRefusalLimit refused cards in a day, however many are
// sent at once, to however many instances: attempts racing past the
// page's check are counted one after the other by the store, those in
// flight included, and the ones over the limit never reach the acquirer
// (no payment records them). A day after the oldest refusal, cards are
// taken again.
func TestRaceCardRefusalLimit(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		b := checkoutSetup(t, db)
		first := b.charge(1, parcela.MethodPix).Billings[0].Bills[0]
		declined := card("4000 0000 0000 0002", "123")
		declined.Installments = 1
		for range parcela.CardRefusalLimit - 1 {
			if p, err := b.payByCard(first, declined); err != nil || p.Status != parcela.PaymentRefused {
				t.Fatalf("refusal under the limit: %+v, %v", p, err)
			}
			b.clock.Advance(time.Minute)
		}
		pay := func() error { _, err := b.payByCard(first, declined); return err }
		refused, rested := 0, 0
		for _, err := range race(pay, pay, pay, pay) {
			switch parcela.ErrorCode(err) {
			case "":
				refused++
			case parcela.ERATELIMITED:
				rested++
			default:
				t.Fatalf("card: %v", err)
			}
		}
		if refused != 1 || rested != 3 {
			t.Fatalf("%d attempts reached the acquirer, %d rested; want 1 and 3", refused, rested)
		}
		if n := len(b.bill(first.ID).Payments); n != 1+parcela.CardRefusalLimit {
			t.Fatalf("%d payments; want the Pix and %d refusals", n, parcela.CardRefusalLimit)
		}
		b.clock.Advance(parcela.CardRefusalWindow - time.Duration(parcela.CardRefusalLimit-1)*time.Minute)
		if p, err := b.payByCard(first, declined); err != nil || p.Status != parcela.PaymentRefused {
			t.Fatalf("a day after the first refusal: %+v, %v", p, err)
		}
	})
}
