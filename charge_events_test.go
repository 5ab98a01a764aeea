package parcela

import (
	"encoding/json"
	"testing"
	"time"
)

// chargedInMemory is a financed order charged in 12 bills, as the charge
// holds it when it renders its events: the order moved, the billing
// appended, the first bill with its payment.
func chargedInMemory(t testing.TB) (*mover, *Order, *Billing, *Company) {
	t.Helper()
	now := calSP(2026, time.March, 5, 10, 0, 0, 0)
	c := NewCompany("Escola X", "11222333000181", "escola-x")
	c.ID = NewID()
	c.CreatedAt, c.UpdatedAt = now, now
	product := testProduct()
	product.Company, product.CreatedAt, product.UpdatedAt = &c, now, now
	product.Kind = Named{ID: NewID(), Name: "course", CreatedAt: now, UpdatedAt: now}
	offer, err := BuildOffer(offerRequest(t, nil), &c, product, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range offer.PaymentConfigurations {
		pc.ID = NewID()
	}
	o := &Order{ID: NewID(), CustomerName: "Maria <da> Silva", CustomerBirthdate: "1990-05-17", Status: OrderPending, Offer: offer,
		Address: Address{ID: NewID(), CreatedAt: now, UpdatedAt: now, City: City{ID: NewID(), Name: "São Paulo", CreatedAt: now, UpdatedAt: now,
			State: State{Acronym: "SP", CreatedAt: now, UpdatedAt: now}}}, CreatedAt: now, UpdatedAt: now}
	req := chargeRequest(offer.PaymentConfigurations[1].ID, MethodPix, 12, "203.0.113.7", "test")
	a := Auth{CompanyID: c.ID, Environment: Sandbox}
	plan, err := PlanCharge(req, o, &c, now, "")
	if err != nil {
		t.Fatal(err)
	}
	billing := newBilling(a, o, plan, now)
	first := billing.Bills[0]
	code := "00020126"
	first.Payments = []*Payment{{ID: NewID(), BillID: first.ID, Method: MethodPix, Status: PaymentUnpaid, AmountCents: first.AmountCents,
		PixCode: &code, CreatedAt: now, ExpiresAt: plan.FirstPaymentExpiresAt}}
	m := newMover(a, now, Links{PublicURL: "https://api.example.com"})
	if err := m.moveOrder(o, OrderInProgress); err != nil {
		t.Fatal(err)
	}
	o.Billings = append(o.Billings, billing)
	return m, o, billing, &c
}

// A charge's events hold the forms of the order, the billing and each
// bill exactly as json.Marshal writes them, in order.
func TestChargeEventsRenderTheForms(t *testing.T) {
	t.Parallel()
	m, o, billing, c := chargedInMemory(t)
	if err := m.chargeEvents(o, billing, c); err != nil {
		t.Fatal(err)
	}
	forms := []any{NewOrderForm(o, m.links), NewBillingOrderForm(billing, m.links)}
	entities := []string{"order " + o.ID + " " + OrderInProgress, "billing " + billing.ID + " " + BillingWaitingPayment}
	for _, b := range billing.Bills {
		forms = append(forms, NewBillEndpointForm(b, c, m.c.At, m.links))
		entities = append(entities, "bill "+b.ID+" "+BillPending)
	}
	if len(m.c.Events) != len(forms) {
		t.Fatalf("%d events, want %d", len(m.c.Events), len(forms))
	}
	for i, e := range m.c.Events {
		want, err := json.Marshal(forms[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Entity + " " + e.EntityID + " " + e.Event; got != entities[i] || string(e.Data) != string(want) {
			t.Fatalf("event %d: %s\n%s\nwant %s\n%s", i, got, e.Data, entities[i], want)
		}
		if i > 0 && e.ID <= m.c.Events[i-1].ID {
			t.Fatalf("event %d's id %s is not after %s", i, e.ID, m.c.Events[i-1].ID)
		}
	}
}

// BenchmarkChargeEvents renders a 12-bill charge's 14 events.
func BenchmarkChargeEvents(b *testing.B) {
	m, o, billing, c := chargedInMemory(b)
	b.ReportAllocs()
	for b.Loop() {
		m.c.Events = m.c.Events[:0]
		if err := m.chargeEvents(o, billing, c); err != nil {
			b.Fatal(err)
		}
	}
}
