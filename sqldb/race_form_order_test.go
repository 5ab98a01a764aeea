package sqldb_test

import (
	"sync"
	"testing"

	"parcela"
	"parcela/sqldb"
)

// One purchase form posted twice at once, to two instances, creates one
// order: the second insert finds the form's key taken and answers the
// first's order. Another form's key, or the API, creates another.
func TestRaceOrdersOfOneForm(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, true)
		req := fromJSON[parcela.OrderRequest](t, `{"order": {"offer_id": "`+r.order.OfferID+`",
			"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
			"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
			"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`)
		key := parcela.NewID()
		var mu sync.Mutex
		ids := map[string]bool{}
		creators := 0 // the calls that say they created it: the page counts an order by them
		create := func() error {
			o, created, err := r.app.Orders.CreateFormOrder(r.ctx, r.a, key, req)
			if err == nil {
				mu.Lock()
				ids[o.ID] = true
				if created {
					creators++
				}
				mu.Unlock()
			}
			return err
		}
		for _, err := range race(create, create, create) {
			if err != nil {
				t.Fatalf("create: %v", err)
			}
		}
		if len(ids) != 1 || creators != 1 {
			t.Fatalf("one form made %d orders, %d calls said they created it", len(ids), creators)
		}
		again, created, err := r.app.Orders.CreateFormOrder(r.ctx, r.a, key, req)
		if err != nil || !ids[again.ID] || again.Offer == nil || created {
			t.Fatalf("the form again: %v, %+v, created %v", err, again, created)
		}
		other, created, err := r.app.Orders.CreateFormOrder(r.ctx, r.a, parcela.NewID(), req)
		if err != nil || ids[other.ID] || !created {
			t.Fatalf("another form: %v, created %v", err, created)
		}
		// The key is the company's: another company's form with the same
		// key is no order of this one.
		if _, err := db.OrderOfForm(r.ctx, parcela.Auth{CompanyID: "other", Environment: parcela.Sandbox}, key); parcela.ErrorCode(err) != parcela.ENOTFOUND {
			t.Fatalf("another company reads the form's order: %v", err)
		}
	})
}
