package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"parcela"
	"parcela/jobs"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A company whose receivers are fast but whose events come faster than
// its places deliver them builds a backlog in the delivery queue. Another
// company's event, queued after it, must still go out within seconds: an
// attempt of the busy company, past its share and finding no free attempt
// slot, is deferred at once, not after waiting up to a second for a slot
// its own waiters hold, so its jobs free River's workers and the queue
// reaches the other company's job without first running the busy one's
// whole backlog (24 s behind it here, before).
func TestBusyCompanyBacklogDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	b := setup(t, sqldb.SQLite)
	const workers, share, hooks, events = 4, 1, 25, 60
	busy := newSlowReceiver(t, 100*time.Millisecond)
	healthy := newSlowReceiver(t, 0)
	for i := range hooks {
		b.hook(t, fmt.Sprintf("%s/busy/%d", busy.srv.URL, i), "order", "in_progress")
	}
	otherCompany := sqldbtest.Company(t, b.db).ID
	b.send(b.sandbox.URL, sqldbtest.Token(t, b.db, otherCompany, parcela.Sandbox), "POST", "/external_api/v1/webhooks", map[string]any{"name": "healthy", "url": healthy.srv.URL + "/ok",
		"entity": "order", "events": []string{"in_progress"}, "verb": "post"}, nil).want(t, 201)

	// The busy company's backlog: one job of 25 deliveries per event.
	ctx := context.Background()
	event := func(companyID string) parcela.Event {
		return parcela.Event{ID: parcela.NewID(), CompanyID: companyID, Environment: parcela.Sandbox, Entity: "order", EntityID: parcela.NewID(),
			Event: "in_progress", Data: []byte(`{"status":"in_progress"}`), CreatedAt: b.clock.Now()}
	}
	for range events {
		if err := b.db.WriteEvents(ctx, []parcela.Event{event(b.company.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	// Then the other company's, queued behind it.
	if err := b.db.WriteEvents(ctx, []parcela.Event{event(otherCompany)}); err != nil {
		t.Fatal(err)
	}

	q, err := jobs.New(b.db, b.enq, jobs.App{Sweeps: b.sweeps, Deliveries: b.app.Deliveries, Upkeep: b.db, Provider: b.app.Provider}, jobs.Config{Clock: b.clock,
		PollInterval: 20 * time.Millisecond, NoPeriodic: true, WebhookAllowedCIDRs: "127.0.0.0/8", WebhookTimeout: 3 * time.Second, NoJitter: true,
		DeliveryWorkers: workers, DeliveriesPerCompany: share})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.StopAndCancel(ctx); err != nil {
			t.Error(err)
		}
	})
	eventually(t, 5*time.Second, "the other company's event delivered", func() bool { return !healthy.firstArrival().IsZero() })
	t.Logf("delivered %v after the start, the busy company's receiver holding at most %d", healthy.firstArrival().Sub(started), busy.most.Load())
	if m := busy.most.Load(); m > workers/2 {
		t.Fatalf("the busy company held %d attempts at once, over its burst of %d", m, workers/2)
	}
}
