package server_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/jobs"
)

// hangingListener accepts connections and never answers them.
func hangingListener(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + ln.Addr().String()
}

// orderEvent is an order's event of company in env, written as now.
func (b *bundle) orderEvent(companyID string, env parcela.Environment) parcela.Event {
	return parcela.Event{ID: parcela.NewID(), CompanyID: companyID, Environment: env, Entity: "order", EntityID: parcela.NewID(),
		Event: "in_progress", Data: []byte(`{"status":"in_progress"}`), CreatedAt: b.clock.Now()}
}

// orderHook subscribes url to company's order events in env.
func (b *bundle) orderHook(t *testing.T, companyID string, env parcela.Environment, url string) {
	t.Helper()
	name, entity, verb := "h", "order", "post"
	events := []string{"in_progress"}
	if _, err := b.app.Webhooks.CreateWebhook(context.Background(), parcela.Auth{CompanyID: companyID, Environment: env},
		parcela.WebhookRequest{Name: &name, URL: &url, Entity: &entity, Events: &events, Verb: &verb}); err != nil {
		t.Fatal(err)
	}
}

// deliverWith starts the delivery workers over b's store: workers slots an
// environment, share of them a company, attempts cut at timeout, and the
// attempts still hanging canceled at the test's end.
func (b *bundle) deliverWith(t *testing.T, timeout time.Duration, workers, share int) {
	t.Helper()
	b.startQueue(t, jobs.Config{WebhookAllowedCIDRs: "127.0.0.0/8", WebhookTimeout: timeout, DeliveryWorkers: workers, DeliveriesPerCompany: share}, true)
}
