package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// As many companies whose receivers hang as there are delivery workers,
// each within its share, took every attempt slot again as their attempts
// timed out, and another company's events each waited an attempt's
// timeout (an audit). Once their attempts are known slow, they hold half
// the workers together, and a healthy company's events go out at once. The
// first wave of attempts, before any of them has timed out, may still hold
// every slot for one timeout: nothing tells a hanging receiver from a slow
// start before then.
func TestSlowCompaniesHoldHalfTheWorkers(t *testing.T) {
	b := setup(t, sqldb.SQLite)
	const timeout, workers, share, bad = 2 * time.Second, 10, 1, 10
	hang := hangingListener(t)
	ctx := context.Background()
	event := func(companyID string) parcela.Event { return b.orderEvent(companyID, parcela.Sandbox) }
	hook := func(companyID, url string) { b.orderHook(t, companyID, parcela.Sandbox, url) }
	var badIDs []string
	for i := range bad {
		id := sqldbtest.Company(t, b.db).ID
		badIDs = append(badIDs, id)
		hook(id, fmt.Sprintf("%s/hang/%d", hang, i))
	}
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived[r.Header.Get("webhook-id")] = time.Now()
		mu.Unlock()
		w.WriteHeader(204)
	}))
	t.Cleanup(healthy.Close)
	good := sqldbtest.Company(t, b.db).ID
	hook(good, healthy.URL+"/ok")
	for range 10 {
		for _, id := range badIDs {
			if err := b.db.WriteEvents(ctx, []parcela.Event{event(id)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.deliverWith(t, timeout, workers, share)
	// The first wave has timed out: each company's first attempt is recorded.
	for _, id := range badIDs {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			ds, _, err := b.app.Webhooks.Deliveries(ctx, parcela.Auth{CompanyID: id, Environment: parcela.Sandbox}, "", parcela.Page{Page: 1, PerPage: 100})
			if err != nil {
				t.Fatal(err)
			}
			recorded := false
			for _, d := range ds {
				recorded = recorded || d.AttemptCount > 0
			}
			if recorded {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no attempt of a hanging receiver recorded")
			}
		}
	}
	for range 5 {
		e := event(good)
		if err := b.db.WriteEvents(ctx, []parcela.Event{e}); err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		var got time.Time
		for deadline := sent.Add(3 * timeout); got.IsZero() && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			got = arrived[e.ID]
			mu.Unlock()
		}
		if got.IsZero() || got.Sub(sent) > timeout/2 {
			t.Fatalf("a healthy company's event, beside %d companies whose receivers hang: arrived %v after it was written", bad, got.Sub(sent).Round(time.Millisecond))
		}
		time.Sleep(300 * time.Millisecond)
	}
}
