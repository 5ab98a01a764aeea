package server_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/jobs"
)

// cancelLog wraps the application's provider (the one cmd/parcela gives
// the jobs) and writes down every payment it is asked to void.
type cancelLog struct {
	parcela.PaymentProvider
	mu  sync.Mutex
	ids []string
}

func (l *cancelLog) Cancel(ctx context.Context, req parcela.CancelRequest) error {
	l.mu.Lock()
	l.ids = append(l.ids, req.PaymentID+"@"+string(req.Environment))
	l.mu.Unlock()
	return l.PaymentProvider.Cancel(ctx, req)
}

func (l *cancelLog) voided(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.ids, id+"@sandbox")
}

// startVoids runs the job queue with the application's provider, logged.
func (b *bundle) startVoids(t *testing.T) *cancelLog {
	t.Helper()
	log := &cancelLog{PaymentProvider: b.app.Provider}
	q, err := jobs.New(b.db, b.enq, jobs.App{Sweeps: b.sweeps, Deliveries: b.app.Deliveries, Upkeep: b.db, Provider: log},
		jobs.Config{Clock: b.clock, PollInterval: 20 * time.Millisecond, NoPeriodic: true, NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	return log
}

// Canceling an order, or a billing, voids its issued payments at the
// provider: the customer can no longer pay them at the bank.
func TestCanceledPaymentsAreVoidedAtTheProvider(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		log := b.startVoids(t)
		upfrontOrder := func(method string) (orderID, paymentID string) {
			offer, order := b.order()
			up, _ := configs(offer)
			charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, method, 1)).want(t, 200).JSON(t)
			return order["id"].(string), openPayment(t, b.bill(t, billIDs(charged)[0]))["id"].(string)
		}

		orderID, boleto := upfrontOrder("boleto")
		b.call("POST", "/external_api/v1/orders/"+orderID+"/cancel", map[string]any{"reason": "customer_dropout"}).want(t, 200)
		eventually(t, 15*time.Second, "the canceled order's boleto is voided at the provider", func() bool { return log.voided(boleto) })

		orderID, pix := upfrontOrder("pix")
		billingID := b.call("GET", "/external_api/v1/orders/"+orderID, nil).want(t, 200).JSON(t)["billings"].([]any)[0].(map[string]any)["id"].(string)
		b.call("POST", "/external_api/v1/billings/"+billingID+"/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}).want(t, 200)
		eventually(t, 15*time.Second, "the canceled billing's Pix is voided at the provider", func() bool { return log.voided(pix) })
	})
}

// A bill paid by its Pix while the payer also holds a boleto for it: the
// boleto is canceled, and voided at the provider, so the bill cannot be
// paid twice. The paid Pix is not voided.
func TestPayingAPixVoidsTheBoletoBesideIt(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		log := b.startVoids(t)
		offer, order := b.order()
		up, _ := configs(offer)
		charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, "pix", 1)).want(t, 200).JSON(t)
		bill := b.bill(t, billIDs(charged)[0])
		pix := openPayment(t, bill)["id"].(string)
		boleto, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, bill["id"].(string), bill["authentication_code"].(string), parcela.MethodBoleto)
		if err != nil || boleto.ID == pix {
			t.Fatalf("boleto beside the Pix: %v %v", boleto, err)
		}

		b.pay(t, pix)
		eventually(t, 15*time.Second, "the boleto beside the paid Pix is voided at the provider", func() bool { return log.voided(boleto.ID) })
		for _, p := range b.bill(t, bill["id"].(string))["payments"].([]any) {
			if p := p.(map[string]any); p["id"] == boleto.ID && p["status"] != "canceled" {
				t.Fatalf("the boleto is %v", p["status"])
			}
		}
		// Further polls: the paid Pix is never voided.
		time.Sleep(200 * time.Millisecond)
		if log.voided(pix) {
			t.Fatal("the paid Pix was voided at the provider")
		}
	})
}
