package sqldb_test

import (
	"context"
	"sync/atomic"
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// openCountingSeats opens a store on e that counts the times a PATCH
// counts an offer's sales inside its transaction (CountSeatsInTx).
func openCountingSeats(t *testing.T, e sqldb.Dialect) (*sqldb.DB, *atomic.Int32) {
	t.Helper()
	counted := new(atomic.Int32)
	db := sqldbtest.Open(t, e, sqldb.Config{Enqueuer: quietEnqueuer{}, Fault: func(_ context.Context, at sqldb.FaultPoint) {
		if at == sqldb.CountSeatsInTx {
			counted.Add(1)
		}
	}})
	return db, counted
}

// SQLite counts every offer's sales as charges take seats and
// cancelations give them back, so a PATCH giving an offer a seat limit
// counts on a reader and never on the single writer, where one offer's
// 300,000 sales held every company's writes for most of a second a PATCH
// (an audit). A running count gone apart from the sales (rows written past
// takeSeat) is set right. PostgreSQL counts in the transaction, which
// holds only the offer's row.
func TestSeatLimitReadsTheSalesCountedOnSQLite(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db, counted := openCountingSeats(t, e)
			ctx := context.Background()
			r := newRound(t, db, 3, false)
			offer := r.order.Offer
			for range 3 {
				o := r.pendingOrder(offer.ID)
				if _, err := r.app.Orders.ChargeOrder(ctx, r.a, o.ID, r.chargeRequest(offer, 3)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := r.app.Orders.CancelOrder(ctx, r.a, r.order.ID, ""); err != nil {
				t.Fatal(err)
			}
			sold := func() int {
				t.Helper()
				var n int
				if err := db.SQLDB().QueryRowContext(ctx, `SELECT sold FROM offers WHERE id = ?`, offer.ID).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if e == sqldb.SQLite {
				if got := sold(); got != 3 {
					t.Fatalf("sold %d after 4 charges and a cancelation, want 3", got)
				}
			}
			limit := func(want, wantCounted int) {
				t.Helper()
				counted.Store(0)
				if err := r.patchOffer(offer.ID, `{"seats": 10}`); err != nil {
					t.Fatal(err)
				}
				if n, o := r.sold(offer.ID); n != want || o.SeatsTaken != want {
					t.Fatalf("seats taken %d, sold %d, want %d", o.SeatsTaken, n, want)
				}
				if got := int(counted.Load()); got != wantCounted {
					t.Errorf("counted in the transaction %d times, want %d", got, wantCounted)
				}
				if _, err := r.app.Catalog.UpdateOffer(ctx, r.a, offer.ID, parcela.OfferFields{ClearSeats: true}); err != nil {
					t.Fatal(err)
				}
			}
			if e == sqldb.Postgres {
				limit(3, 1)
				return
			}
			limit(3, 0)
			// A running count gone wrong is set right, still not counted on
			// the writer.
			if _, err := db.SQLDB().ExecContext(ctx, `UPDATE offers SET sold = 7 WHERE id = ?`, offer.ID); err != nil {
				t.Fatal(err)
			}
			limit(3, 0)
			if got := sold(); got != 3 {
				t.Errorf("sold %d after the count, want 3", got)
			}
			limit(3, 0)
		})
	}
}

// The migration counts every offer's sales, limited or not.
func TestOfferSalesMigrationCounts(t *testing.T) {
	t.Parallel()
	db := sqldbtest.Open(t, sqldb.SQLite, sqldb.Config{Enqueuer: quietEnqueuer{}})
	ctx := context.Background()
	r := newRound(t, db, 3, false)
	offer := r.order.Offer
	o := r.pendingOrder(offer.ID)
	if _, err := r.app.Orders.ChargeOrder(ctx, r.a, o.ID, r.chargeRequest(offer, 3)); err != nil {
		t.Fatal(err)
	}
	r.pendingOrder(offer.ID) // not charged: no seat
	if _, err := db.SQLDB().ExecContext(ctx, `UPDATE offers SET sold = 0`); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := db.SQLDB().ExecContext(ctx, `ALTER TABLE offers DROP COLUMN sold`); err != nil {
			t.Fatal(err)
		}
		if err := sqldb.RunMigrationUp(db, "sqlite/00026_offer_sales_counted.sql"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.SQLDB().QueryRowContext(ctx, `SELECT sold FROM offers WHERE id = ?`, offer.ID).Scan(&n); err != nil || n != 2 {
			t.Fatalf("sold %d (%v), want 2", n, err)
		}
	}
}

// saleBetween charges an order of the offer after each count of its seats
// sold, before the PATCH that read it writes (sales of an offer that keeps
// selling).
type saleBetween struct {
	*sqldb.DB
	r     *raceRound
	offer *parcela.Offer
	sales int
}

func (s *saleBetween) SeatsSold(ctx context.Context, a parcela.Auth, offerID string) (int, int, error) {
	n, mark, err := s.DB.SeatsSold(ctx, a, offerID)
	if s.sales > 0 {
		s.sales--
		o := s.r.pendingOrder(s.offer.ID)
		if _, err := s.r.app.Orders.ChargeOrder(ctx, s.r.a, o.ID, s.r.chargeRequest(s.offer, 3)); err != nil {
			s.r.t.Fatal(err)
		}
	}
	return n, mark, err
}

// A sale between a PATCH's count and its write is counted there, without
// a count on SQLite's single writer, and the PATCH is answered with it: the
// count was taken again in the writer each time, and then the PATCH was
// decided again at each sale, so an offer that kept selling had every
// decision refused (a review). Both engines.
func TestSeatLimitOnAnOfferStillSelling(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db, counted := openCountingSeats(t, e)
			ctx := context.Background()
			r := newRound(t, db, 3, false)
			offer := r.order.Offer
			catalog := parcela.NewCatalog(&saleBetween{DB: db, r: r, offer: offer, sales: 8}, r.clock)
			seats := 100
			o, err := catalog.UpdateOffer(ctx, r.a, offer.ID, parcela.OfferFields{Seats: &seats})
			if err != nil {
				t.Fatalf("a seat limit on an offer selling at every count: %v", err)
			}
			if n, stored := r.sold(offer.ID); o.SeatsTaken != n || stored.SeatsTaken != n {
				t.Errorf("seats taken %d answered, %d stored; %d sold", o.SeatsTaken, stored.SeatsTaken, n)
			}
			if n := counted.Load(); e == sqldb.SQLite && n != 0 {
				t.Errorf("the PATCH counted the offer's sales on the single writer %d times", n)
			}
		})
	}
}

// cancelBetween cancels an order after the first count of the offer's
// seats sold, before the PATCH that read it writes.
type cancelBetween struct {
	*sqldb.DB
	r      *raceRound
	cancel string
}

func (s *cancelBetween) SeatsSold(ctx context.Context, a parcela.Auth, offerID string) (int, int, error) {
	n, mark, err := s.DB.SeatsSold(ctx, a, offerID)
	if id := s.cancel; id != "" {
		s.cancel = ""
		if _, err := s.r.app.Orders.CancelOrder(ctx, s.r.a, id, ""); err != nil {
			s.r.t.Fatal(err)
		}
	}
	return n, mark, err
}

// A cancelation between a PATCH's count and its write, on an offer whose
// running count was left behind (its rows written past takeSeat, at 0),
// gives its seat back: held at 0, the count lost a seat for good (a
// review).
func TestSeatLimitWithACancelationBetweenOnAnOfferLeftBehind(t *testing.T) {
	t.Parallel()
	db := sqldbtest.Open(t, sqldb.SQLite, sqldb.Config{Enqueuer: quietEnqueuer{}})
	ctx := context.Background()
	r := newRound(t, db, 3, false)
	offer := r.order.Offer
	for range 2 {
		o := r.pendingOrder(offer.ID)
		if _, err := r.app.Orders.ChargeOrder(ctx, r.a, o.ID, r.chargeRequest(offer, 3)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SQLDB().ExecContext(ctx, `UPDATE offers SET sold = 0 WHERE id = ?`, offer.ID); err != nil {
		t.Fatal(err)
	}
	catalog := parcela.NewCatalog(&cancelBetween{DB: db, r: r, cancel: r.order.ID}, r.clock)
	seats := 10
	if _, err := catalog.UpdateOffer(ctx, r.a, offer.ID, parcela.OfferFields{Seats: &seats}); err != nil {
		t.Fatal(err)
	}
	if n, stored := r.sold(offer.ID); stored.SeatsTaken != n || n != 2 {
		t.Errorf("seats taken %d stored, %d orders charged and not canceled, want 2", stored.SeatsTaken, n)
	}
}
