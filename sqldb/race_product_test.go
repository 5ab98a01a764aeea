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

// A product disabled by a transaction that runs while a charge of one of
// its offers has made its writes and not yet committed: on PostgreSQL the
// disabling waits for the charge (which share-locks the product's row), so
// the charge never commits after it. SQLite has one writer: nothing commits
// inside the charge's transaction.
func TestRaceChargeAndDisableProductInFlight(t *testing.T) {
	if !slices.Contains(sqldbtest.Engines(), sqldb.Postgres) {
		t.Skip("PostgreSQL only: SQLite serializes the writers")
	}
	t.Parallel()
	ctx := context.Background()
	f := &faults{}
	db := sqldbtest.Open(t, sqldb.Postgres, sqldb.Config{Enqueuer: quietEnqueuer{}, Fault: f.hook})
	connect := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, sqldbtest.DSN(t, sqldb.Postgres))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	patcher, watcher := connect(), connect()
	var pid uint32
	if err := patcher.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	for _, seats := range []string{`null`, `10`} {
		r := newRound(t, db, 3, true)
		offer := r.order.Offer
		if err := r.patchOffer(offer.ID, `{"seats": `+seats+`}`); err != nil {
			t.Fatal(err)
		}
		patched := make(chan error, 1)
		started, disabledFirst := false, false
		f.arm(sqldb.BeforeCommit, func() {
			if started {
				return
			}
			started = true
			// As a product PATCH writes (UpdateProduct): the row locked first.
			go func() {
				patched <- pgx.BeginFunc(ctx, patcher, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `SELECT id FROM products WHERE id = $1 FOR UPDATE`, offer.ProductID); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, `UPDATE products SET availability = 'disabled', version = version + 1 WHERE id = $1`, offer.ProductID)
					return err
				})
			}()
			// Until the disabling has committed, or waits for this charge.
			for {
				select {
				case err := <-patched:
					patched <- err
					disabledFirst = true
					return
				default:
				}
				var waits bool
				if err := watcher.QueryRow(ctx, `SELECT COALESCE(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&waits); err != nil {
					t.Error(err)
					return
				}
				if waits {
					return
				}
				time.Sleep(time.Millisecond)
			}
		})
		req := &parcela.IdempotentRequest{Auth: r.a, Key: "charge-" + r.order.ID, RequestHash: "charge " + r.order.ID,
			Render: func(any) (int, []byte, error) { return 200, []byte(`{}`), nil }}
		_, err := r.app.Orders.ChargeOrder(parcela.WithIdempotentRequest(r.ctx, req), r.a, r.order.ID, r.chargeRequest(offer, 3))
		f.arm("", nil)
		if perr := <-patched; perr != nil {
			t.Fatal(perr)
		}
		n, _ := r.sold(offer.ID)
		if disabledFirst && (err == nil || n != 0) {
			t.Fatalf("seats %s: a charge committed after its product was disabled (%d billings, %v)", seats, n, err)
		}
		if disabledFirst {
			t.Fatalf("seats %s: the product was disabled while a charge of its offer held it: %v", seats, err)
		}
		if err != nil || n != 1 {
			t.Fatalf("seats %s: the charge that committed first: %v, %d billings", seats, err, n)
		}
	}
}

// A product disabled by a transaction that runs while an order of one of
// its offers has made its writes and not yet committed: on PostgreSQL the
// disabling waits for the order (which share-locks the product's row at
// its commit check), so the order never commits after it.
func TestRaceCreateOrderAndDisableProductInFlight(t *testing.T) {
	if !slices.Contains(sqldbtest.Engines(), sqldb.Postgres) {
		t.Skip("PostgreSQL only: SQLite serializes the writers")
	}
	t.Parallel()
	ctx := context.Background()
	f := &faults{}
	db := sqldbtest.Open(t, sqldb.Postgres, sqldb.Config{Enqueuer: quietEnqueuer{}, Fault: f.hook})
	connect := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, sqldbtest.DSN(t, sqldb.Postgres))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	patcher, watcher := connect(), connect()
	var pid uint32
	if err := patcher.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	r := newRound(t, db, 3, true)
	offer := r.order.Offer
	patched := make(chan error, 1)
	started, disabledFirst := false, false
	f.arm(sqldb.BeforeCommit, func() {
		if started {
			return
		}
		started = true
		go func() {
			patched <- pgx.BeginFunc(ctx, patcher, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `SELECT id FROM products WHERE id = $1 FOR NO KEY UPDATE`, offer.ProductID); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, `UPDATE products SET availability = 'disabled', version = version + 1 WHERE id = $1`, offer.ProductID)
				return err
			})
		}()
		for {
			select {
			case err := <-patched:
				patched <- err
				disabledFirst = true
				return
			default:
			}
			var waits bool
			if err := watcher.QueryRow(ctx, `SELECT COALESCE(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&waits); err != nil {
				t.Error(err)
				return
			}
			if waits {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	// As a request with an Idempotency-Key: its response is written in
	// the transaction, where the fault point is.
	req := &parcela.IdempotentRequest{Auth: r.a, Key: "order-" + offer.ID, RequestHash: "order " + offer.ID,
		Render: func(any) (int, []byte, error) { return 201, []byte(`{}`), nil }}
	_, err := r.app.Orders.CreateOrder(parcela.WithIdempotentRequest(r.ctx, req), r.a, fromJSON[parcela.OrderRequest](t, `{"order": {"offer_id": "`+offer.ID+`",
		"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
		"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
		"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
	f.arm("", nil)
	if perr := <-patched; perr != nil {
		t.Fatal(perr)
	}
	if disabledFirst {
		t.Fatalf("the product was disabled while an order of its offer held it (the order: %v)", err)
	}
	if err != nil {
		t.Fatalf("the order that committed first: %v", err)
	}
}
