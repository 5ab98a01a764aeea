package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// The sandbox never delays production's deliveries. Sandbox companies
// whose receivers hang hold the sandbox's attempt slots, and other sandbox
// companies' jobs wait for one (slotWait, up to a batch's start budget):
// in one River queue they held the workers production's jobs needed, and a
// production attempt began 2.7 s after its event (an audit). Each
// environment has its queue and workers now.
func TestSandboxBacklogDoesNotDelayProduction(t *testing.T) {
	b := setup(t, sqldb.SQLite)
	const timeout, workers, share = 5 * time.Second, 4, 1
	ctx := context.Background()
	hang := hangingListener(t)
	event := b.orderEvent
	hook := func(companyID string, env parcela.Environment, url string) { b.orderHook(t, companyID, env, url) }
	// Sandbox companies whose receivers hang, one per sandbox slot.
	var hanging []string
	for i := range workers {
		id := sqldbtest.Company(t, b.db).ID
		hanging = append(hanging, id)
		hook(id, parcela.Sandbox, fmt.Sprintf("%s/hang/%d", hang, i))
	}
	// Sandbox companies with healthy receivers and a batch each.
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(ok.Close)
	var busy []string
	for range 2 * workers {
		id := sqldbtest.Company(t, b.db).ID
		busy = append(busy, id)
		for i := range 20 {
			hook(id, parcela.Sandbox, fmt.Sprintf("%s/ok/%d", ok.URL, i))
		}
	}
	// A production company; its attempt's start is when its receiver
	// accepts the connection (the TLS handshake is not needed to time it).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan time.Time, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- time.Now()
			c.Close()
		}
	}()
	prod := sqldbtest.Company(t, b.db).ID
	hook(prod, parcela.Production, "https://"+ln.Addr().String()+"/prod")

	for _, id := range hanging {
		if err := b.db.WriteEvents(ctx, []parcela.Event{event(id, parcela.Sandbox)}); err != nil {
			t.Fatal(err)
		}
	}
	b.deliverWith(t, timeout, workers, share)
	time.Sleep(300 * time.Millisecond) // the hanging attempts hold the sandbox slots
	for _, id := range busy {
		if err := b.db.WriteEvents(ctx, []parcela.Event{event(id, parcela.Sandbox)}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // their jobs are fetched
	if err := b.db.WriteEvents(ctx, []parcela.Event{event(prod, parcela.Production)}); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case at := <-accepted:
		d := at.Sub(sent)
		if d > 500*time.Millisecond {
			t.Fatalf("a production delivery began %v after its event, behind the sandbox's backlog", d.Round(time.Millisecond))
		}
	case <-time.After(3 * timeout):
		t.Fatalf("no production attempt within %v", 3*timeout)
	}
}
