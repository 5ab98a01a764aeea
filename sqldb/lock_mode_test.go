package sqldb_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A company's in-flight write that refers to it (an order, a bill, an
// event: PostgreSQL key-share-locks the company's row for each such
// insert) does not hold up the creation of one of its webhooks, nor would
// that creation hold up the writes: webhook creations count the company's
// webhooks in turn with a lock that conflicts only with each other
// (FOR NO KEY UPDATE), where FOR UPDATE waited for every such write.
// SQLite has one writer: nothing to interleave.
func TestWebhookCreationWaitsForNoOtherWrite(t *testing.T) {
	t.Parallel()
	if !slices.Contains(sqldbtest.Engines(), sqldb.Postgres) {
		t.Skip("PARCELA_TEST_POSTGRES_URL is not set")
	}
	ctx := context.Background()
	db, clock, a := hookStore(t, sqldb.Postgres)
	held, err := db.SQLDB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Rollback() })
	if _, err := held.ExecContext(ctx, `SELECT id FROM companies WHERE id = $1 FOR KEY SHARE`, a.CompanyID); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := parcela.NewWebhooks(db, clock).CreateWebhook(wctx, a, fromJSON[parcela.WebhookRequest](t,
		`{"name": "h", "url": "https://example.com/hook", "verb": "post", "entity": "order", "events": ["in_progress"]}`)); err != nil {
		t.Fatalf("a webhook's creation beside a write referring to its company: %v", err)
	}
}

// An offer's or a product's PATCH beside an in-flight write that refers to
// it (an order of the offer, an offer of the product: PostgreSQL
// key-share-locks the row for each such insert) goes through, where FOR
// UPDATE waited for it. What the PATCH must wait for, a charge's or an
// offer creation's share lock, it still does (the race tests).
func TestPatchesWaitForNoInsertReferringToTheRow(t *testing.T) {
	t.Parallel()
	if !slices.Contains(sqldbtest.Engines(), sqldb.Postgres) {
		t.Skip("PARCELA_TEST_POSTGRES_URL is not set")
	}
	db := sqldbtest.Open(t, sqldb.Postgres, sqldb.Config{Enqueuer: quietEnqueuer{}})
	r := newRound(t, db, 3, true)
	offer := r.order.Offer
	for _, tc := range []struct {
		table, id string
		patch     func(ctx context.Context) error
	}{
		{"offers", offer.ID, func(ctx context.Context) error {
			_, err := r.app.Catalog.UpdateOffer(ctx, r.a, offer.ID, fromJSON[parcela.OfferFields](t, `{"name": "Turma nova"}`))
			return err
		}},
		{"products", offer.ProductID, func(ctx context.Context) error {
			_, err := r.app.Catalog.UpdateProduct(ctx, r.a, offer.ProductID, fromJSON[parcela.ProductInput](t, `{"name": "Curso novo"}`))
			return err
		}},
	} {
		held, err := db.SQLDB().BeginTx(r.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := held.ExecContext(r.ctx, `SELECT id FROM `+tc.table+` WHERE id = $1 FOR KEY SHARE`, tc.id); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(r.ctx, 3*time.Second)
		err = tc.patch(ctx)
		cancel()
		held.Rollback()
		if err != nil {
			t.Fatalf("a PATCH of %s beside a write referring to it: %v", tc.table, err)
		}
	}
}
