package jobs_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"parcela/jobs"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

func TestMain(m *testing.M) { sqldbtest.Main(m) }

type probeArgs struct{ Name string }

func (probeArgs) Kind() string { return "test_probe" }

type probeWorker struct {
	river.WorkerDefaults[probeArgs]
	mu  *sync.Mutex
	ran map[string]bool
}

func (w *probeWorker) Work(ctx context.Context, job *river.Job[probeArgs]) error {
	w.mu.Lock()
	w.ran[job.Args.Name] = true
	w.mu.Unlock()
	return nil
}

// A job inserted in a transaction that rolls back never runs; one inserted
// in a committed transaction does.
func TestJobInRolledBackTransactionNeverRuns(t *testing.T) {
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
			var mu sync.Mutex
			ran := map[string]bool{}
			q, err := jobs.New(db, enq, jobs.App{Sweeps: app.Sweeps, Deliveries: app.Deliveries, Upkeep: db, Provider: app.Provider},
				jobs.Config{PollInterval: 20 * time.Millisecond, NoPeriodic: true, Register: func(w *river.Workers) {
					river.AddWorker(w, &probeWorker{mu: &mu, ran: ran})
				}})
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

			// The probes go on this test's own queue: the package's other tests
			// work the default queue of the same database, and one of them taking
			// a probe it has no worker for would fail it into a retry seconds later.
			own := &river.InsertOpts{Queue: enq.DeliveryQueue()}
			name := sqldbtest.Suffix()
			tx, err := db.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := enq.InsertTx(ctx, tx, []river.InsertManyParams{{Args: probeArgs{Name: "rolled-back-" + name}, InsertOpts: own}}); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}

			tx, err = db.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := enq.InsertTx(ctx, tx, []river.InsertManyParams{{Args: probeArgs{Name: "committed-" + name}, InsertOpts: own}}); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}

			deadline := time.Now().Add(15 * time.Second)
			for {
				mu.Lock()
				done := ran["committed-"+name]
				mu.Unlock()
				if done {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the committed job never ran")
				}
				time.Sleep(20 * time.Millisecond)
			}
			// Give the queue further polls to prove the other job is not there.
			time.Sleep(300 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			if ran["rolled-back-"+name] {
				t.Fatal("a job from a rolled-back transaction ran")
			}
		})
	}
}
