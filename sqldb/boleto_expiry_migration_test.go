package sqldb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// Migration 00025 moves a boleto's expiry from its grace's last
// millisecond, where an older binary put it and a payment made then was
// refused, to the millisecond after; a Pix's, which is exact, and a
// boleto's already there are left as they are.
func TestBoletoExpiryMigration(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		charged := func(method string) (*raceRound, *parcela.Payment) {
			r := newRound(t, db, 3, true)
			offer, err := r.app.Catalog.Offer(ctx, r.a, r.order.OfferID)
			if err != nil {
				t.Fatal(err)
			}
			req := fromJSON[parcela.ChargeRequest](t, fmt.Sprintf(`{"payment_configuration_id": %q, "due_day": 10, "installments": 3,
				"payment": {"payment_method": %q}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`, offer.PaymentConfigurations[0].ID, method))
			if r.order, err = r.app.Orders.ChargeOrder(ctx, r.a, r.order.ID, req); err != nil {
				t.Fatal(err)
			}
			return r, r.unpaid(0)
		}
		boleto, oldBoleto := charged(parcela.MethodBoleto)
		pix, oldPix := charged(parcela.MethodPix)
		kept, keptBoleto := charged(parcela.MethodBoleto)
		if oldBoleto.ExpiresAt.Nanosecond() != 0 || oldBoleto.ExpiresAt.In(parcela.SaoPaulo).Hour() != 0 {
			t.Fatalf("a boleto issued now expires at %v, want a day's 00:00:00.000", oldBoleto.ExpiresAt)
		}
		// As an older binary wrote them: the boleto at its grace's
		// 23:59:59.999, the Pix at an instant ending in 999 ms.
		for _, p := range []*parcela.Payment{oldBoleto, oldPix} {
			if _, err := db.SQLDB().ExecContext(ctx, sqldb.Rebind(db, `UPDATE payments SET expires_at = expires_at - 1 WHERE id = ?`), p.ID); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 { // run again by a second process, it changes nothing more
			if err := sqldb.RunMigrationUp(db, "00025_boleto_expiry_after_its_last_day.sql"); err != nil {
				t.Fatal(err)
			}
		}
		if got := boleto.unpaid(0).ExpiresAt; !got.Equal(oldBoleto.ExpiresAt) {
			t.Errorf("the older boleto expires at %v, want %v", got, oldBoleto.ExpiresAt)
		}
		if got, want := pix.unpaid(0).ExpiresAt, oldPix.ExpiresAt.Add(-time.Millisecond); !got.Equal(want) {
			t.Errorf("the Pix expires at %v, want %v as it was", got, want)
		}
		if got := kept.unpaid(0).ExpiresAt; !got.Equal(keptBoleto.ExpiresAt) {
			t.Errorf("a boleto already expiring after its last day moved to %v from %v", got, keptBoleto.ExpiresAt)
		}
	})
}
