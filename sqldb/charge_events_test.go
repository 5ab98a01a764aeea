package sqldb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// jobRecorder stands in for River, recording the deliveries and voids
// queued.
type jobRecorder struct {
	ids   []string
	voids []parcela.CancelRequest
}

func (r *jobRecorder) EnqueueVoids(_ context.Context, _ *sqldb.Tx, voids []parcela.CancelRequest) error {
	r.voids = append(r.voids, voids...)
	return nil
}

func (r *jobRecorder) EnqueueDeliveries(_ context.Context, _ *sqldb.Tx, jobs []sqldb.DeliveryJob) error {
	for _, j := range jobs {
		r.ids = append(r.ids, j.DeliveryID)
	}
	return nil
}

func fromJSON[T any](t testing.TB, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// financedOffer creates an offer whose one configuration finances in up
// to 12 bills.
func financedOffer(t testing.TB, app *parcela.Services, a parcela.Auth) *parcela.Offer {
	t.Helper()
	ctx := context.Background()
	p, err := app.Catalog.CreateProduct(ctx, a, fromJSON[parcela.ProductInput](t, `{"name": "Curso", "full_amount_cents": 150000, "kind": "course"}`))
	if err != nil {
		t.Fatal(err)
	}
	offer, err := app.Catalog.CreateOffer(ctx, a, fromJSON[parcela.OfferRequest](t, `{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
		"payment_configurations": [{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": ["boleto"],
		"allowed_down_payment_methods": ["pix", "boleto"], "down_payment_type": "percentage", "down_payment_value": 0.2,
		"interest_rate": 0.0299, "max_installments": 12, "expires_in_hours": 72}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return offer
}

// chargedOrder creates an order of offer and charges it in 12 bills.
func chargedOrder(t testing.TB, app *parcela.Services, a parcela.Auth, offer *parcela.Offer) *parcela.Order {
	t.Helper()
	ctx := context.Background()
	o, err := app.Orders.CreateOrder(ctx, a, fromJSON[parcela.OrderRequest](t, `{"order": {"offer_id": "`+offer.ID+`",
		"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
		"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
		"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	o, err = app.Orders.ChargeOrder(ctx, a, o.ID, fromJSON[parcela.ChargeRequest](t, `{"payment_configuration_id": "`+offer.PaymentConfigurations[0].ID+`",
		"due_day": 10, "installments": 12, "payment": {"payment_method": "pix"}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// A financed charge (12 bills) writes its 14 events in order, and one delivery (and
// job) per event a webhook subscribes to, in the same order.
func TestChargeEventsAndDeliveries(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			clock := parcela.NewTestClock(time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC))
			jobs := &jobRecorder{}
			db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock, Enqueuer: jobs})
			app := sqldbtest.Services(db, clock)
			c := sqldbtest.Company(t, db)
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}

			hook := func(entity string, events ...string) *parcela.Webhook {
				list, _ := json.Marshal(events)
				w, err := app.Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t, fmt.Sprintf(
					`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": %q, "events": %s}`, entity, list)))
				if err != nil {
					t.Fatal(err)
				}
				return w
			}
			orderHook, billHook := hook("order", "in_progress"), hook("bill", "pending", "paid")
			hook("billing", "active") // not the charge's waiting_payment

			offer := financedOffer(t, app, a)
			o := chargedOrder(t, app, a, offer)
			billing := o.Billings[0]
			want := []string{"order " + o.ID + " in_progress", "billing " + billing.ID + " waiting_payment"}
			for _, b := range billing.Bills {
				want = append(want, "bill "+b.ID+" pending")
			}
			if len(want) != 14 {
				t.Fatalf("%d bills, want 12", len(billing.Bills))
			}
			events, err := db.CompanyEvents(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			var got, wantDelivered []string
			for _, ev := range events {
				got = append(got, ev.Entity+" "+ev.EntityID+" "+ev.Event)
				if ev.Entity != "billing" {
					wantDelivered = append(wantDelivered, ev.ID)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("events\n%v\nwant\n%v", got, want)
			}
			// Each event's data is its entity's form as json.Marshal writes it.
			links := sqldbtest.Links.Links(a.Environment)
			forms := []any{parcela.NewOrderForm(o, links), parcela.NewBillingOrderForm(billing, links)}
			for _, b := range billing.Bills {
				forms = append(forms, parcela.NewBillEndpointForm(b, o.Offer.Product.Company, clock.Now(), links))
			}
			for i, f := range forms {
				if data, err := json.Marshal(f); err != nil || string(data) != string(events[i].Data) {
					t.Fatalf("event %s data\n%s\nwant (%v)\n%s", got[i], events[i].Data, err, data)
				}
			}

			// Deliveries are listed newest first; each webhook gets its own.
			var delivered []string
			for _, w := range []*parcela.Webhook{billHook, orderHook} {
				ds, _, err := db.Deliveries(ctx, a, w.ID, parcela.Page{Page: 1, PerPage: 100})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range slices.Backward(ds) {
					if d.WebhookID != w.ID || d.Status != "pending" || d.Entity == "billing" {
						t.Fatalf("delivery %+v", d)
					}
					delivered = append(delivered, d.EventID)
				}
			}
			// The order's delivery was created first, so it follows the bills' in this listing.
			if len(delivered) != 13 || !slices.Equal(delivered[:12], wantDelivered[1:]) || delivered[12] != wantDelivered[0] {
				t.Fatalf("delivered events %v, want %v", delivered, wantDelivered)
			}
			all, _, err := db.Deliveries(ctx, a, "", parcela.Page{Page: 1, PerPage: 100})
			if err != nil {
				t.Fatal(err)
			}
			var queued []string
			for _, d := range slices.Backward(all) {
				queued = append(queued, d.ID)
			}
			if !slices.Equal(jobs.ids, queued) {
				t.Fatalf("jobs %v, want one per delivery in order %v", jobs.ids, queued)
			}
		})
	}
}

// A batch larger than one statement's parameters allow is split, and keeps
// its order.
func TestWriteEventsInChunks(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			jobs := &jobRecorder{}
			db := sqldbtest.Open(t, e, sqldb.Config{Enqueuer: jobs})
			c := sqldbtest.Company(t, db)
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
			if _, err := sqldbtest.Services(db, nil).Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
				`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": "bill", "events": ["paid"]}`)); err != nil {
				t.Fatal(err)
			}
			const n = 300 // 2,400 event parameters, 2,100 delivery parameters
			events := make([]parcela.Event, 0, n)
			for i := range n {
				events = append(events, parcela.Event{ID: parcela.NewID(), CompanyID: a.CompanyID, Environment: a.Environment, Entity: "bill",
					EntityID: parcela.NewID(), Event: "paid", Data: json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`), CreatedAt: time.Now()})
			}
			if err := db.WriteEvents(ctx, events); err != nil {
				t.Fatal(err)
			}
			events, err := db.CompanyEvents(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != n {
				t.Fatalf("%d events, want %d", len(events), n)
			}
			for i, ev := range events {
				if string(ev.Data) != fmt.Sprintf(`{"i":%d}`, i) {
					t.Fatalf("event %d is %s", i, ev.Data)
				}
			}
			ds, total, err := db.Deliveries(ctx, a, "", parcela.Page{Page: 1, PerPage: 1000})
			if err != nil || total != n || len(jobs.ids) != n {
				t.Fatalf("%d deliveries, %d jobs (%v), want %d", total, len(jobs.ids), err, n)
			}
			slices.Reverse(ds)
			for i, d := range ds {
				if d.EventID != events[i].ID || d.ID != jobs.ids[i] {
					t.Fatalf("delivery %d: event %s job %s, want %s %s", i, d.EventID, jobs.ids[i], events[i].ID, d.ID)
				}
			}
		})
	}
}
