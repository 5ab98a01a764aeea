package sqldb_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A charged order of an offer without a limit, canceled by a transaction
// that has made its writes and not yet committed while a PATCH gives the
// offer a seat limit: the PATCH counts the orders not canceled, so it must
// either wait for the cancelation and count without it, or commit first and
// have the cancelation give the seat back. Where the cancelation skipped
// the offer still without a limit and the PATCH counted its order, the
// seat was taken for ever by a canceled order.
func TestRaceCancelOrderAndSeatLimitInFlight(t *testing.T) {
	if !slices.Contains(sqldbtest.Engines(), sqldb.Postgres) {
		t.Skip("PostgreSQL only: SQLite serializes the writers")
	}
	t.Parallel()
	ctx := context.Background()
	f := &faults{}
	db := sqldbtest.Open(t, sqldb.Postgres, sqldb.Config{Enqueuer: quietEnqueuer{}, Fault: f.hook})
	watcher, err := pgx.Connect(ctx, sqldbtest.DSN(t, sqldb.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watcher.Close(context.Background()) })
	r := newRound(t, db, 3, false)
	offer := r.order.Offer
	patched := make(chan error, 1)
	started := false
	f.arm(sqldb.BeforeCommit, func() {
		if started {
			return
		}
		started = true
		go func() { patched <- r.patchOffer(offer.ID, `{"seats": 10}`) }()
		// Until the PATCH has committed, or waits for this cancelation.
		for {
			select {
			case err := <-patched:
				patched <- err
				return
			default:
			}
			var waiting int
			if err := watcher.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM offers%'`).Scan(&waiting); err != nil {
				t.Error(err)
				return
			}
			if waiting > 0 {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	// Its fault point is the answer's storing, as an API request's.
	req := &parcela.IdempotentRequest{Auth: r.a, Key: "cancel-" + r.order.ID, RequestHash: "cancel " + r.order.ID,
		Render: func(any) (int, []byte, error) { return 200, []byte(`{}`), nil }}
	_, err = r.app.Orders.CancelOrder(parcela.WithIdempotentRequest(r.ctx, req), r.a, r.order.ID, "customer_dropout")
	f.arm("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-patched; err != nil {
		t.Fatal(err)
	}
	n, got := r.sold(offer.ID)
	if got.Seats == nil || *got.Seats != 10 || n != 0 || got.SeatsTaken != 0 {
		t.Fatalf("offer %v seats, %d taken, %d orders charged and not canceled; want 10 seats, none taken", got.Seats, got.SeatsTaken, n)
	}
	if r.state().Status != parcela.OrderCanceled {
		t.Fatalf("order %s", r.state().Status)
	}
}
