package jobs_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"parcela"
	"parcela/jobs"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// flakyProvider is a PaymentProvider whose Cancel fails its first calls.
type flakyProvider struct {
	parcela.PaymentProvider
	mu       sync.Mutex
	failures int // calls still to fail
	calls    []parcela.CancelRequest
}

func (p *flakyProvider) Cancel(ctx context.Context, req parcela.CancelRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, req)
	if p.failures > 0 {
		p.failures--
		return errors.New("the provider is down")
	}
	return ctx.Err()
}

func (p *flakyProvider) called() []parcela.CancelRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]parcela.CancelRequest(nil), p.calls...)
}

// A queued void calls the provider's Cancel with the payment's id and
// environment, and a failed call is retried until it succeeds.
func TestVoidWorkerRetriesUntilTheProviderCancels(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			enq, err := jobs.NewEnqueuer("webhooks_" + sqldbtest.Suffix())
			if err != nil {
				t.Fatal(err)
			}
			db := sqldbtest.Open(t, e, sqldb.Config{Enqueuer: enq})
			app := sqldbtest.Services(db, nil)
			provider := &flakyProvider{failures: 2}
			reg := prometheus.NewRegistry()
			q, err := jobs.New(db, enq, jobs.App{Sweeps: app.Sweeps, Deliveries: app.Deliveries, Upkeep: db, Provider: provider},
				jobs.Config{PollInterval: 20 * time.Millisecond, NoPeriodic: true, NoJitter: true, VoidBackoff: 10 * time.Millisecond, Metrics: reg})
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

			want := parcela.CancelRequest{PaymentID: parcela.NewID(), Environment: parcela.Production}
			tx, err := db.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := enq.EnqueueVoids(ctx, tx, []parcela.CancelRequest{want}); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}

			deadline := time.Now().Add(15 * time.Second)
			for len(provider.called()) < 3 {
				if time.Now().After(deadline) {
					t.Fatalf("the provider was called %d times, want 3 (two failures, then the void)", len(provider.called()))
				}
				time.Sleep(20 * time.Millisecond)
			}
			// Give the queue further polls to prove the void, done, is not sent again.
			time.Sleep(200 * time.Millisecond)
			calls := provider.called()
			if len(calls) != 3 {
				t.Fatalf("%d calls, want 3", len(calls))
			}
			for _, c := range calls {
				if c != want {
					t.Fatalf("called with %+v, want %+v", c, want)
				}
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			failed := -1.0
			for _, mf := range mfs {
				if mf.GetName() == "parcela_provider_void_failures_total" {
					failed = mf.GetMetric()[0].GetCounter().GetValue()
				}
			}
			if failed != 2 {
				t.Fatalf("%v void failures counted, want 2", failed)
			}
		})
	}
}
