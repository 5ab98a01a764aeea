package sqldb_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// Charges racing for an offer's seats, and an offer's PATCH racing a
// charge.

// pendingOrder creates another pending order of the round's offer.
func (r *raceRound) pendingOrder(offerID string) *parcela.Order {
	r.t.Helper()
	o, err := r.app.Orders.CreateOrder(r.ctx, r.a, fromJSON[parcela.OrderRequest](r.t, `{"order": {"offer_id": "`+offerID+`",
		"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
		"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
		"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
	if err != nil {
		r.t.Fatal(err)
	}
	return o
}

func (r *raceRound) patchOffer(id, body string) error {
	_, err := r.app.Catalog.UpdateOffer(r.ctx, r.a, id, fromJSON[parcela.OfferFields](r.t, body))
	return err
}

// sold counts the billings charged from the offer and reads its seats.
func (r *raceRound) sold(offerID string) (billings int, offer *parcela.Offer) {
	r.t.Helper()
	n, _, err := r.db.SeatsSold(r.ctx, r.a, offerID)
	if err != nil {
		r.t.Fatal(err)
	}
	if offer, err = r.db.Offer(r.ctx, r.a, offerID); err != nil {
		r.t.Fatal(err)
	}
	return n, offer
}

// The last seat, bought by two orders at once, is sold once: one charge
// succeeds, the other is told the offer is sold out.
func TestRaceLastSeat(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, true)
		offer := r.order.Offer
		if err := r.patchOffer(offer.ID, `{"seats": 1}`); err != nil {
			t.Fatal(err)
		}
		other := r.pendingOrder(offer.ID)
		charge := func(o *parcela.Order) func() error {
			return func() error {
				_, err := r.app.Orders.ChargeOrder(r.ctx, r.a, o.ID, r.chargeRequest(offer, 3))
				return err
			}
		}
		errs := race(charge(r.order), charge(other))
		won := 0
		for _, err := range errs {
			switch parcela.ErrorCode(err) {
			case "":
				won++
			case parcela.EINVALID, parcela.EINVALIDSTATE: // sold out
			default:
				t.Fatalf("charge: %v", err)
			}
		}
		n, got := r.sold(offer.ID)
		if won != 1 || n != 1 || got.SeatsTaken != 1 {
			t.Fatalf("%d charges succeeded, %d billings, %d seats taken; want one of each (%v)", won, n, got.SeatsTaken, errs)
		}
	})
}

// A seat limit given to an offer while it sells counts every charge,
// whichever commits first: the seats taken are the billings sold.
func TestRaceChargeAndSeatLimit(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, true)
		offer := r.order.Offer
		other := r.pendingOrder(offer.ID)
		charge := func(o *parcela.Order) func() error {
			return func() error {
				_, err := r.app.Orders.ChargeOrder(r.ctx, r.a, o.ID, r.chargeRequest(offer, 3))
				return err
			}
		}
		errs := race(charge(r.order), charge(other), func() error { return r.patchOffer(offer.ID, `{"seats": 5}`) })
		for i, err := range errs {
			if !r.ok("charge or patch", err) {
				t.Fatalf("request %d refused: %v", i, err)
			}
		}
		if n, got := r.sold(offer.ID); n != 2 || got.Seats == nil || got.SeatsTaken != n {
			t.Fatalf("%d billings sold, offer seats %v taken %d", n, got.Seats, got.SeatsTaken)
		}
	})
}

// An offer disabled while a charge of it is being decided is not sold
// after the PATCH that disabled it answered: the charge reads the offer
// again and is refused.
func TestRaceChargeAndDisableOffer(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		for _, seats := range []string{`null`, `10`} {
			r := newRound(t, db, 3, true)
			offer := r.order.Offer
			if err := r.patchOffer(offer.ID, `{"seats": `+seats+`}`); err != nil {
				t.Fatal(err)
			}
			var patched error
			store := &interposedStore{DB: db, before: func() { patched = r.patchOffer(offer.ID, `{"availability": "disabled"}`) }}
			app := parcela.NewServices(store, r.app.Provider, nil, r.clock, sqldbtest.Links)
			_, err := app.Orders.ChargeOrder(r.ctx, r.a, r.order.ID, r.chargeRequest(offer, 3))
			if patched != nil {
				t.Fatal(patched)
			}
			if parcela.ErrorCode(err) != parcela.EINVALID {
				t.Fatalf("seats %s: a charge applied after its offer was disabled: %v, want 422", seats, err)
			}
			if n, got := r.sold(offer.ID); n != 0 || got.SeatsTaken != 0 {
				t.Fatalf("seats %s: %d billings, %d seats taken of a disabled offer", seats, n, got.SeatsTaken)
			}
		}
	})
}

// A product disabled while a charge of one of its offers is being decided
// is not sold after the PATCH that disabled it answered, as an offer
// disabled is not: the charge reads the offer again and is refused.
func TestRaceChargeAndDisableProduct(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		for _, seats := range []string{`null`, `10`} {
			r := newRound(t, db, 3, true)
			offer := r.order.Offer
			if err := r.patchOffer(offer.ID, `{"seats": `+seats+`}`); err != nil {
				t.Fatal(err)
			}
			var patched error
			store := &interposedStore{DB: db, before: func() {
				_, patched = r.app.Catalog.UpdateProduct(r.ctx, r.a, offer.ProductID, fromJSON[parcela.ProductInput](t, `{"availability": "disabled"}`))
			}}
			app := parcela.NewServices(store, r.app.Provider, nil, r.clock, sqldbtest.Links)
			_, err := app.Orders.ChargeOrder(r.ctx, r.a, r.order.ID, r.chargeRequest(offer, 3))
			if patched != nil {
				t.Fatal(patched)
			}
			if parcela.ErrorCode(err) != parcela.EINVALID || !strings.Contains(err.Error(), "the product is disabled") {
				t.Fatalf("seats %s: a charge applied after its product was disabled: %v, want 422 saying the product is disabled", seats, err)
			}
			if n, got := r.sold(offer.ID); n != 0 || got.SeatsTaken != 0 {
				t.Fatalf("seats %s: %d billings, %d seats taken of a disabled product", seats, n, got.SeatsTaken)
			}
		}
	})
}

// Two PATCHes of one offer, each naming its own field, the second's write
// after the first committed: the offer keeps both fields, and the second
// answers the offer as it stands. Neither puts back what it read of the
// other's field: a rename never sells again an offer whose sales a PATCH
// stopped and answered.
func TestRaceTwoOfferPatches(t *testing.T) {
	later := raceStart.Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)
	cases := []struct{ first, second string }{
		{`{"availability": "disabled"}`, `{"name": "Turma de março"}`},
		{`{"name": "Turma de março"}`, `{"availability": "disabled"}`},
		{`{"expires_at": "` + later + `"}`, `{"name": "Turma de março"}`},
		{`{"exclude_from_campaign": true}`, `{"name": "Turma de março"}`},
	}
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		for _, tc := range cases {
			r := newRound(t, db, 3, true)
			offer := r.order.Offer
			var first error
			store := &interposedStore{DB: db, before: func() { first = r.patchOffer(offer.ID, tc.first) }}
			app := parcela.NewServices(store, r.app.Provider, nil, r.clock, sqldbtest.Links)
			answered, err := app.Catalog.UpdateOffer(r.ctx, r.a, offer.ID, fromJSON[parcela.OfferFields](t, tc.second))
			if err != nil || first != nil {
				t.Fatalf("%s then %s: %v, %v", tc.first, tc.second, first, err)
			}
			_, got := r.sold(offer.ID)
			want := *offer
			for _, patch := range []string{tc.first, tc.second} {
				if err := want.Update(fromJSON[parcela.OfferFields](t, patch), r.clock.Now()); err != nil {
					t.Fatal(err)
				}
			}
			state := func(o *parcela.Offer) string {
				expires := "never"
				if o.ExpiresAt != nil {
					expires = o.ExpiresAt.UTC().Format(time.RFC3339Nano)
				}
				return fmt.Sprintf("name %q, %s, expires %s, excluded %t", o.Name, o.Availability, expires, o.ExcludeFromCampaign)
			}
			if state(got) != state(&want) || state(answered) != state(&want) {
				t.Fatalf("%s then %s: stored %s, answered %s; want %s", tc.first, tc.second, state(got), state(answered), state(&want))
			}
		}
	})
}

// An offer never costs more than its product, whichever of an offer's
// creation and a PATCH lowering its product's amount commits first: the
// offer created after the product was lowered below it is refused, as if
// the PATCH had come first; and of the two sent at once, one is refused.
func TestRaceCreateOfferAndLowerProduct(t *testing.T) {
	offerRequest := func(productID string, cents int) parcela.OfferRequest {
		return fromJSON[parcela.OfferRequest](t, fmt.Sprintf(`{"offer": {"name": "Turma 2", "product_id": %q, "amount_cents": %d},
			"payment_configurations": [{"payment_type": "upfront", "payment_methods": ["pix"], "expires_in_hours": 72}]}`, productID, cents))
	}
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, true)
		productID := r.order.Offer.ProductID // full amount 150,000, its offer 120,000
		lower := func(cents int) error {
			_, err := r.app.Catalog.UpdateProduct(r.ctx, r.a, productID, fromJSON[parcela.ProductInput](t, fmt.Sprintf(`{"full_amount_cents": %d}`, cents)))
			return err
		}
		// The most an offer of the product costs, and the product's amount.
		stands := func() (int64, int64) {
			most, _, err := db.MaxOfferAmount(r.ctx, productID)
			if err != nil {
				t.Fatal(err)
			}
			p, err := db.Product(r.ctx, r.a, productID)
			if err != nil {
				t.Fatal(err)
			}
			return most, p.FullAmountCents
		}

		var lowered error
		store := &interposedStore{DB: db, before: func() { lowered = lower(130000) }}
		app := parcela.NewServices(store, r.app.Provider, nil, r.clock, sqldbtest.Links)
		_, err := app.Catalog.CreateOffer(r.ctx, r.a, offerRequest(productID, 140000))
		var refused *parcela.Error
		if lowered != nil || !errors.As(err, &refused) || len(refused.Fields) != 1 || refused.Fields[0].Code != "too_large" {
			t.Fatalf("an offer of 140000 created as its product was lowered to 130000: %v (the PATCH: %v)", err, lowered)
		}
		if most, full := stands(); most > full {
			t.Fatalf("an offer of %d of a product of %d", most, full)
		}

		errs := race(func() error { return lower(125000) }, func() error {
			_, err := r.app.Catalog.CreateOffer(r.ctx, r.a, offerRequest(productID, 128000))
			return err
		})
		for i, err := range errs {
			if err != nil && parcela.ErrorCode(err) != parcela.EINVALID {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		if most, full := stands(); most > full || (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("an offer of %d of a product of %d (%v)", most, full, errs)
		}
	})
}

// Two PATCHes of one product, each naming its own field, the second's
// write after the first committed: the product keeps both, and the second
// answers the product as it stands.
func TestRaceTwoProductPatches(t *testing.T) {
	cases := []struct{ first, second string }{
		{`{"availability": "disabled"}`, `{"name": "Curso novo"}`},
		{`{"full_amount_cents": 160000}`, `{"description": "Aulas ao vivo"}`},
	}
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		for _, tc := range cases {
			r := newRound(t, db, 3, true)
			id := r.order.Offer.ProductID
			patch := func(app *parcela.Services, body string) (*parcela.Product, error) {
				return app.Catalog.UpdateProduct(r.ctx, r.a, id, fromJSON[parcela.ProductInput](t, body))
			}
			var first error
			store := &interposedStore{DB: db, before: func() { _, first = patch(r.app, tc.first) }}
			answered, err := patch(parcela.NewServices(store, r.app.Provider, nil, r.clock, sqldbtest.Links), tc.second)
			if err != nil || first != nil {
				t.Fatalf("%s then %s: %v, %v", tc.first, tc.second, first, err)
			}
			got, err := db.Product(r.ctx, r.a, id)
			if err != nil {
				t.Fatal(err)
			}
			want := *r.order.Offer.Product
			kinds, shifts, err := db.ProductReferences(r.ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, body := range []string{tc.first, tc.second} {
				if err := want.Apply(fromJSON[parcela.ProductInput](t, body), kinds, shifts); err != nil {
					t.Fatal(err)
				}
			}
			state := func(p *parcela.Product) string {
				desc := "none"
				if p.Description != nil {
					desc = *p.Description
				}
				return fmt.Sprintf("name %q, %s, %d cents, description %q", p.Name, p.Availability, p.FullAmountCents, desc)
			}
			if state(got) != state(&want) || state(answered) != state(&want) {
				t.Fatalf("%s then %s: stored %s, answered %s; want %s", tc.first, tc.second, state(got), state(answered), state(&want))
			}
		}
	})
}

// interposedStore is the store, except that the first of its writes below
// (Apply, UpdateOffer, CreateOffer, UpdateProduct) first runs before, once:
// the write comes only after what before does has committed, as when
// another request's change commits between a request's read and its write.
type interposedStore struct {
	*sqldb.DB
	before  func()
	created []string // the ids of the orders CreateOrder was given
}

func (s *interposedStore) interpose() {
	if f := s.before; f != nil {
		s.before = nil
		f()
	}
}

func (s *interposedStore) Apply(ctx context.Context, c *parcela.Change) error {
	s.interpose()
	return s.DB.Apply(ctx, c)
}

func (s *interposedStore) UpdateOffer(ctx context.Context, u parcela.OfferUpdate) error {
	s.interpose()
	return s.DB.UpdateOffer(ctx, u)
}

func (s *interposedStore) CreateOffer(ctx context.Context, o *parcela.Offer) error {
	s.interpose()
	return s.DB.CreateOffer(ctx, o)
}

func (s *interposedStore) UpdateProduct(ctx context.Context, p *parcela.Product) error {
	s.interpose()
	return s.DB.UpdateProduct(ctx, p)
}

func (s *interposedStore) CreateOrder(ctx context.Context, o *parcela.Order) error {
	s.interpose()
	s.created = append(s.created, o.ID)
	return s.DB.CreateOrder(ctx, o)
}

// An offer or its product disabled while an order of the offer is being
// decided (read, checked, not yet stored) gets no order after the PATCH
// that disabled it answered: the order's commit finds the offer no longer
// sells, reads it again and is refused 422 not_sellable, as a charge is.
func TestRaceCreateOrderAndDisable(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, true)
		offer := r.order.Offer
		disable := map[string]func() error{
			"the offer is disabled": func() error { return r.patchOffer(offer.ID, `{"availability": "disabled"}`) },
			"the product is disabled": func() error {
				_, err := r.app.Catalog.UpdateProduct(r.ctx, r.a, offer.ProductID, fromJSON[parcela.ProductInput](t, `{"availability": "disabled"}`))
				return err
			},
		}
		for why, stop := range disable {
			var patched error
			store := &interposedStore{DB: db, before: func() { patched = stop() }}
			app := parcela.NewServices(store, r.app.Provider, nil, r.clock, sqldbtest.Links)
			_, err := app.Orders.CreateOrder(r.ctx, r.a, fromJSON[parcela.OrderRequest](t, `{"order": {"offer_id": "`+offer.ID+`",
				"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
				"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
				"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
			if patched != nil {
				t.Fatal(patched)
			}
			if parcela.ErrorCode(err) != parcela.EINVALID || !strings.Contains(err.Error(), why) {
				t.Fatalf("an order created after %s: %v, want 422 saying so", strings.TrimPrefix(why, "the "), err)
			}
			for _, id := range store.created {
				if _, err := db.Order(r.ctx, r.a, id); parcela.ErrorCode(err) != parcela.ENOTFOUND {
					t.Fatalf("%s, yet order %s was stored: %v", why, id, err)
				}
			}
			// Enabled again, for the next case.
			if err := r.patchOffer(offer.ID, `{"availability": "enabled"}`); err != nil {
				t.Fatal(err)
			}
			if _, err := r.app.Catalog.UpdateProduct(r.ctx, r.a, offer.ProductID, fromJSON[parcela.ProductInput](t, `{"availability": "enabled"}`)); err != nil {
				t.Fatal(err)
			}
		}
	})
}
