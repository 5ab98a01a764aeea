package sqldb_test

import (
	"context"
	"sync"
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A listing of products, offers or deliveries counts its rows and reads
// its page in two statements, each with its own snapshot: rows created
// between them are on the page (newest first) but not in the count. Its
// total_items must still be at least what its page shows, as a bill
// listing's is, and a page past the end keeps the count.
func TestRaceListingsCountAtLeastTheirPage(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			clock := parcela.NewTestClock(raceStart)
			jobs := &jobRecorder{}
			db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock, Enqueuer: jobs})
			app := sqldbtest.Services(db, clock)
			a := parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}
			if _, err := app.Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
				`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": "order", "events": ["in_progress"]}`)); err != nil {
				t.Fatal(err)
			}
			product := func() error {
				_, err := app.Catalog.CreateProduct(ctx, a, fromJSON[parcela.ProductInput](t, `{"name": "Curso", "full_amount_cents": 150000, "kind": "course"}`))
				return err
			}
			p, err := app.Catalog.CreateProduct(ctx, a, fromJSON[parcela.ProductInput](t, `{"name": "Curso", "full_amount_cents": 150000, "kind": "course"}`))
			if err != nil {
				t.Fatal(err)
			}
			offer := func() error {
				_, err := app.Catalog.CreateOffer(ctx, a, fromJSON[parcela.OfferRequest](t, `{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
					"payment_configurations": [{"payment_type": "upfront", "payment_methods": ["pix"]}]}`))
				return err
			}
			financed := financedOffer(t, app, a)
			charge := func() error { // a delivery of its order's in_progress
				o, err := app.Orders.CreateOrder(ctx, a, fromJSON[parcela.OrderRequest](t, `{"order": {"offer_id": "`+financed.ID+`",
					"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
					"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
					"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
				if err != nil {
					return err
				}
				_, err = app.Orders.ChargeOrder(ctx, a, o.ID, fromJSON[parcela.ChargeRequest](t, `{"payment_configuration_id": "`+financed.PaymentConfigurations[0].ID+`",
					"due_day": 10, "installments": 2, "payment": {"payment_method": "pix"}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`))
				return err
			}
			listings := map[string]func() (int, int, error){
				"products": func() (int, int, error) {
					out, total, err := db.Products(ctx, a, parcela.Page{Page: 1, PerPage: parcela.MaxPerPage})
					return len(out), total, err
				},
				"offers": func() (int, int, error) {
					out, total, err := db.Offers(ctx, a, parcela.Page{Page: 1, PerPage: parcela.MaxPerPage})
					return len(out), total, err
				},
				"deliveries": func() (int, int, error) {
					out, total, err := db.Deliveries(ctx, a, "", parcela.Page{Page: 1, PerPage: parcela.MaxPerPage})
					return len(out), total, err
				},
			}
			pastEnd := map[string]func(page int) (int, int, error){
				"products": func(page int) (int, int, error) {
					out, total, err := db.Products(ctx, a, parcela.Page{Page: page, PerPage: 7})
					return len(out), total, err
				},
				"offers": func(page int) (int, int, error) {
					out, total, err := db.Offers(ctx, a, parcela.Page{Page: page, PerPage: 7})
					return len(out), total, err
				},
				"deliveries": func(page int) (int, int, error) {
					out, total, err := db.Deliveries(ctx, a, "", parcela.Page{Page: page, PerPage: 7})
					return len(out), total, err
				},
			}
			for name, list := range listings {
				write := map[string]func() error{"products": product, "offers": offer, "deliveries": charge}[name]
				var wg sync.WaitGroup
				stop := make(chan struct{})
				wg.Go(func() {
					defer close(stop)
					for range 30 {
						if err := write(); err != nil {
							t.Error(err)
							return
						}
					}
				})
				bad := 0
				for running := true; running; {
					select {
					case <-stop:
						running = false
					default:
					}
					shown, total, err := list()
					if err != nil {
						t.Fatal(err)
					}
					if shown > total {
						if bad++; bad <= 3 {
							t.Errorf("%s: total_items %d, %d shown", name, total, shown)
						}
					}
				}
				wg.Wait()
				if bad > 3 {
					t.Errorf("%s: %d listings showed more than their total_items", name, bad)
				}
				// Nothing changing, the count is the rows', and a page past
				// the end is empty with the same count.
				shown, total, err := list()
				if err != nil || shown != total {
					t.Errorf("%s: total_items %d, %d shown (%v)", name, total, shown, err)
				}
				if n, past, err := pastEnd[name](total/7 + 2); err != nil || n != 0 || past != total {
					t.Errorf("%s: page %d of 7: total_items %d and %d rows (%v), want %d and none", name, total/7+2, past, n, err, total)
				}
			}
		})
	}
}
