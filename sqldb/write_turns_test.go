package sqldb_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// holdingEnqueuer holds the void jobs of a cancelation in its transaction,
// which holds the offer's row (the seat it releases), until release closes.
type holdingEnqueuer struct {
	hold    atomic.Bool
	holding chan struct{}
	release chan struct{}
	once    sync.Once
}

func (e *holdingEnqueuer) EnqueueVoids(context.Context, *sqldb.Tx, []parcela.CancelRequest) error {
	if e.hold.Load() {
		e.once.Do(func() { close(e.holding) })
		<-e.release
	}
	return nil
}

func (e *holdingEnqueuer) EnqueueDeliveries(context.Context, *sqldb.Tx, []sqldb.DeliveryJob) error {
	return nil
}

// One company's charges queued on its offer's locked row hold at most half
// of PostgreSQL's pool, and another company's read does not wait for the
// lock with them. They took every connection, and the other company's
// read of its own order waited until the lock was released, up to the
// write timeout (an audit). Shown by order, not by time: the lock is
// released only after the read has answered.
func TestOneCompanysLockWaitsLeaveAnothersRead(t *testing.T) {
	t.Parallel()
	if !slices.Contains(sqldbtest.Engines(), sqldb.Postgres) {
		t.Skip("PostgreSQL only: SQLite's reads have connections of their own")
	}
	enq := &holdingEnqueuer{holding: make(chan struct{}), release: make(chan struct{})}
	db := sqldbtest.Open(t, sqldb.Postgres, sqldb.Config{Enqueuer: enq})
	ctx := context.Background()
	other := newRound(t, db, 3, false)
	r := newRound(t, db, 3, false)
	offer := r.order.Offer
	if err := r.patchOffer(offer.ID, `{"seats": 100}`); err != nil {
		t.Fatal(err)
	}
	orders := make([]*parcela.Order, 24)
	for i := range orders {
		orders[i] = r.pendingOrder(offer.ID)
	}
	enq.hold.Store(true)
	canceled := make(chan error, 1)
	go func() {
		_, err := r.app.Orders.CancelOrder(ctx, r.a, r.order.ID, "")
		canceled <- err
	}()
	<-enq.holding
	var release sync.Once
	defer release.Do(func() { close(enq.release) })
	var wg sync.WaitGroup
	charged := make(chan error, len(orders))
	for _, o := range orders {
		wg.Go(func() {
			_, err := r.app.Orders.ChargeOrder(ctx, r.a, o.ID, r.chargeRequest(offer, 3))
			charged <- err
		})
	}
	admin, err := pgx.Connect(ctx, sqldbtest.DSN(t, sqldb.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// Wait until the charges that can hold connections wait on the row:
	// all of the pool without turns (15 beside the cancelation), half of
	// it with them, after which more would have come within a few seconds.
	var waiting int
	for start := time.Now(); waiting < 15 && (waiting < 7 || time.Since(start) < 3*time.Second); time.Sleep(10 * time.Millisecond) {
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("only %d transactions wait on the offer's row", waiting)
		}
	}
	readCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, readErr := db.Order(readCtx, other.a, other.order.ID)
	release.Do(func() { close(enq.release) })
	if err := <-canceled; err != nil {
		t.Fatalf("cancel: %v", err)
	}
	wg.Wait()
	close(charged)
	for err := range charged {
		if err != nil {
			t.Errorf("a charge queued on the row: %v", err)
		}
	}
	if readErr != nil {
		t.Fatalf("another company's read, while %d of this company's transactions waited on its offer's row: %v", waiting, readErr)
	}
	if waiting > 9 {
		t.Errorf("%d transactions waited on the row at once, over half the pool", waiting)
	}
}

// A sweep's writes take no company's turn: one company's charges queued on
// its offer's locked row held all its turns, and the overdue sweep, which
// works every company's rows one at a time, waited behind that company's
// bill for the lock, and another company's bill stayed pending (a review).
// Shown by order: the lock is released only after the sweep has answered.
func TestACompanysQueuedChargesLeaveTheSweeps(t *testing.T) {
	t.Parallel()
	if !slices.Contains(sqldbtest.Engines(), sqldb.Postgres) {
		t.Skip("PostgreSQL only: SQLite takes no turns")
	}
	enq := &holdingEnqueuer{holding: make(chan struct{}), release: make(chan struct{})}
	db := sqldbtest.Open(t, sqldb.Postgres, sqldb.Config{Enqueuer: enq})
	ctx := context.Background()
	a := newRound(t, db, 3, false)
	a.activate()
	b := newRound(t, db, 3, false)
	b.activate()
	offer := a.order.Offer
	if err := a.patchOffer(offer.ID, `{"seats": 100}`); err != nil {
		t.Fatal(err)
	}
	sweeps := b.app.Sweeps.Only(a.a.CompanyID, b.a.CompanyID)
	b.clock.Set(b.unpaid(1).ExpiresAt.AddDate(0, 0, 5))
	if _, err := sweeps.ExpireDuePayments(ctx); err != nil {
		t.Fatal(err)
	}
	a.clock.Set(b.clock.Now())
	holder := a.pendingOrder(offer.ID)
	if _, err := a.app.Orders.ChargeOrder(ctx, a.a, holder.ID, a.chargeRequest(offer, 3)); err != nil {
		t.Fatal(err)
	}
	orders := make([]*parcela.Order, 12)
	for i := range orders {
		orders[i] = a.pendingOrder(offer.ID)
	}
	enq.hold.Store(true)
	canceled := make(chan error, 1)
	go func() {
		_, err := a.app.Orders.CancelOrder(ctx, a.a, holder.ID, "")
		canceled <- err
	}()
	select {
	case <-enq.holding:
	case err := <-canceled:
		t.Fatalf("the cancelation voided nothing: %v", err)
	}
	var release sync.Once
	defer release.Do(func() { close(enq.release) })
	var wg sync.WaitGroup
	for _, o := range orders {
		wg.Go(func() { _, _ = a.app.Orders.ChargeOrder(ctx, a.a, o.ID, a.chargeRequest(offer, 3)) })
	}
	admin, err := pgx.Connect(ctx, sqldbtest.DSN(t, sqldb.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// Every turn of the company taken: its charges wait on the row.
	var waiting int
	for start := time.Now(); waiting < 7; time.Sleep(10 * time.Millisecond) {
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("only %d transactions wait on the offer's row", waiting)
		}
	}
	sweepCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rep, sweepErr := sweeps.MarkOverdue(sweepCtx)
	status := b.bill(1).Status
	release.Do(func() { close(enq.release) })
	if err := <-canceled; err != nil {
		t.Fatalf("cancel: %v", err)
	}
	wg.Wait()
	if sweepErr != nil || rep.Moved < 2 || status != parcela.BillOverdue {
		t.Fatalf("the overdue sweep while one company's charges held its turns: %+v, %v; the other company's bill %s", rep, sweepErr, status)
	}
}
