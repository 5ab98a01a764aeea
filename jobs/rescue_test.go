package jobs_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"parcela"
	"parcela/jobs"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

func fromJSON[T any](t testing.TB, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// chargeWithHook subscribes url to an order's in_progress and charges an
// order: one delivery, whose job waits in the queue.
func chargeWithHook(t *testing.T, app *parcela.Services, a parcela.Auth, url string) {
	t.Helper()
	ctx := context.Background()
	if _, err := app.Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t, `{"name": "orders", "url": "`+url+`",
		"entity": "order", "events": ["in_progress"], "verb": "post"}`)); err != nil {
		t.Fatal(err)
	}
	p, err := app.Catalog.CreateProduct(ctx, a, fromJSON[parcela.ProductInput](t, `{"name": "Curso", "full_amount_cents": 150000}`))
	if err != nil {
		t.Fatal(err)
	}
	offer, err := app.Catalog.CreateOffer(ctx, a, fromJSON[parcela.OfferRequest](t, `{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
		"payment_configurations": [{"payment_type": "upfront", "payment_methods": ["pix"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := app.Orders.CreateOrder(ctx, a, fromJSON[parcela.OrderRequest](t, `{"order": {"offer_id": "`+offer.ID+`",
		"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
		"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
		"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Orders.ChargeOrder(ctx, a, o.ID, fromJSON[parcela.ChargeRequest](t, `{"payment_configuration_id": "`+offer.PaymentConfigurations[0].ID+`",
		"due_day": 10, "installments": 1, "payment": {"payment_method": "pix"}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`)); err != nil {
		t.Fatal(err)
	}
}

// A delivery taken by an instance that then died (its job left running,
// as River's own fetch leaves it) goes out again from a live instance 25 s
// after the dead one began it, within 27 s on an idle machine: not
// sooner, since a live attempt may last that long, and not at River's
// default of an hour (or its rescuer's 30 s rounds).
func TestDeliveryOfADeadInstanceIsRescued(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			enq, err := jobs.NewEnqueuer("webhooks_" + sqldbtest.Suffix())
			if err != nil {
				t.Fatal(err)
			}
			db := sqldbtest.Open(t, e, sqldb.Config{Enqueuer: enq})
			app := sqldbtest.Services(db, nil)
			a := parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}
			var mu sync.Mutex
			var got []time.Time
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got = append(got, time.Now())
				mu.Unlock()
			}))
			t.Cleanup(recv.Close)
			chargeWithHook(t, app, a, recv.URL)

			// The dead instance fetched the job as River does, 20 s ago, and
			// never finished it.
			var exec riverdriver.Executor
			if e == sqldb.Postgres {
				exec = riverpgxv5.New(db.PgxPool()).GetExecutor()
			} else {
				exec = riversqlite.New(db.SQLDB()).GetExecutor()
			}
			taken, err := exec.JobGetAvailable(ctx, &riverdriver.JobGetAvailableParams{ClientID: "dead-instance", MaxAttemptedBy: 100,
				MaxToLock: 10, Queue: enq.SandboxDeliveryQueue()})
			if err != nil || len(taken) != 1 || taken[0].State != "running" {
				t.Fatalf("the dead instance took %v: %v", taken, err)
			}
			began := time.Now().Add(-20 * time.Second).UTC()
			if _, err := exec.JobUpdateFull(ctx, &riverdriver.JobUpdateFullParams{ID: taken[0].ID, AttemptedAtDoUpdate: true, AttemptedAt: &began}); err != nil {
				t.Fatal(err)
			}

			q, err := jobs.New(db, enq, jobs.App{Sweeps: app.Sweeps, Deliveries: app.Deliveries, Upkeep: db, Provider: app.Provider},
				jobs.Config{PollInterval: 50 * time.Millisecond, NoPeriodic: true, WebhookAllowedCIDRs: "127.0.0.0/8"})
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := q.Stop(context.Background()); err != nil {
					t.Error(err)
				}
			})
			deadline := time.Now().Add(20 * time.Second)
			for {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the delivery was never rescued")
				}
				time.Sleep(50 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			// 27 s at most on an idle machine (rescueAfter + rescueInterval);
			// 35 s leaves room for a loaded one (31 s in a CI run beside
			// other tests) and still tells it from River's rescuer, whose
			// rounds of 30 s would take it to 55 s.
			if after := got[0].Sub(began); after < 25*time.Second || after > 35*time.Second {
				t.Fatalf("delivered %v after the dead instance began it, want 25 to 35 s", after.Round(time.Millisecond))
			}
			if len(got) != 1 {
				t.Fatalf("delivered %d times", len(got))
			}
		})
	}
}
