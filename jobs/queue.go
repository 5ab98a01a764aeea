// Package jobs runs parcela's background work on River: webhook delivery,
// voids of canceled payments at the provider, and the periodic sweeps. Each
// job's arguments live beside their worker. Jobs are inserted in the same
// transaction as the change that causes them (Enqueuer), so a job exists
// exactly when its cause committed.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"parcela"
	"parcela/sqldb"
	"parcela/webhook"
)

// Config tunes the queue. Zero values take production defaults.
type Config struct {
	Logger       *slog.Logger
	Clock        parcela.Clock // default: the system clock
	PollInterval time.Duration // how often workers look for new jobs
	Workers      int           // concurrent jobs on the default queue
	// DeliveryWorkers is how many webhook deliveries of each environment
	// run at once (default 100).
	DeliveryWorkers int
	// VoidWorkers is how many voids at the payment provider run at once
	// (default 10).
	VoidWorkers int
	// VoidBackoff is the wait before a failed void's first retry, doubled
	// after each (default 1 s; tests shorten it).
	VoidBackoff time.Duration
	// DeliveriesPerCompany is how many of them one company may hold in one
	// environment (default a tenth of DeliveryWorkers, at least 1).
	DeliveriesPerCompany int
	// Register adds workers beyond parcela's own (tests use it).
	Register func(*river.Workers)
	// NoPeriodic leaves out the periodic sweeps (tests that drive them by hand).
	NoPeriodic bool
	// WebhookAllowedCIDRs opens private ranges to webhook delivery
	// (PARCELA_WEBHOOK_ALLOWED_CIDRS; development and tests only).
	WebhookAllowedCIDRs string
	// OwnListeners are the process's listeners, which no webhook reaches
	// whatever WebhookAllowedCIDRs opens (webhook.AddressPolicy.RefuseOwn).
	OwnListeners []netip.AddrPort
	// WebhookTimeout bounds one delivery attempt (default 15 s).
	WebhookTimeout time.Duration
	// Metrics, when set, receives the delivery metrics.
	Metrics prometheus.Registerer
	// NoJitter makes retry delays exact (tests).
	NoJitter bool
	// CountCompaction is how often bill count deltas are folded into the
	// per-day counts (default 1 s; negative: never, for tests that fold by hand).
	CountCompaction time.Duration
}

// App is what the jobs run: the use cases, the store's own upkeep, and the
// payment provider that canceled payments are voided at (the application's,
// parcela.Services.Provider, which voids card approvals too).
type App struct {
	Sweeps     parcela.SweepService
	Deliveries parcela.DeliveryService
	Upkeep     Upkeep
	Provider   parcela.PaymentProvider
}

// Upkeep is the store's housekeeping, which no use case stands before.
type Upkeep interface {
	CompactBillCounts(ctx context.Context) (int, error)
	DeleteExpiredIdempotencyKeys(ctx context.Context) (int, error)
}

// Queue is a River client working jobs on the store's database.
type Queue struct {
	start  func(context.Context) error
	stop   func(context.Context) error
	cancel func(context.Context) error
	// compactor is nil when compaction is off.
	compactor *countCompactor
	rescuer   *stuckDeliveries
	inFlight  *jobsInFlight
}

// New builds the queue's workers over db's connections. enq is the store's
// enqueuer, whose delivery queue they work.
func New(db *sqldb.DB, enq *Enqueuer, app App, cfg Config) (*Queue, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = parcela.SystemClock{}
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 200 * time.Millisecond
	}
	if cfg.Workers == 0 {
		cfg.Workers = 16
	}
	if cfg.DeliveryWorkers == 0 {
		cfg.DeliveryWorkers = 100
	}
	if app.Provider == nil {
		// A queued void must find a provider: without one it would fail
		// until River gave up on it.
		return nil, errors.New("job queue: App.Provider is required to void canceled payments")
	}
	if cfg.VoidWorkers == 0 {
		cfg.VoidWorkers = 10
	}
	if cfg.VoidBackoff == 0 {
		cfg.VoidBackoff = time.Second
	}
	workers := river.NewWorkers()
	addSweepWorkers(workers, &deps{app: app, log: cfg.Logger, sweepFailures: newSweepFailures(cfg.Metrics)})
	policy, err := webhook.NewAddressPolicy(cfg.WebhookAllowedCIDRs)
	if err != nil {
		return nil, fmt.Errorf("PARCELA_WEBHOOK_ALLOWED_CIDRS: %w", err)
	}
	policy.RefuseOwn(cfg.OwnListeners, webhook.InterfaceAddrs())
	if cfg.WebhookTimeout == 0 {
		cfg.WebhookTimeout = webhook.DefaultTimeout
	}
	if cfg.DeliveriesPerCompany == 0 {
		cfg.DeliveriesPerCompany = max(1, cfg.DeliveryWorkers/10)
	}
	dw := &deliverWorker{deliveries: app.Deliveries, clock: cfg.Clock, sender: webhook.NewSender(policy, cfg.WebhookTimeout),
		metrics: newDeliveryMetrics(cfg.Metrics, app.Deliveries), jitter: webhook.RandomJitter,
		shares: newCompanyShares(cfg.DeliveriesPerCompany, cfg.DeliveryWorkers, !cfg.NoJitter), slots: newEnvironmentSlots(cfg.DeliveryWorkers),
		startBudget: batchStartBudget, log: cfg.Logger}
	if cfg.NoJitter {
		dw.jitter = nil
	}
	river.AddWorker(workers, dw)
	river.AddWorker(workers, &voidWorker{provider: app.Provider, log: cfg.Logger, failures: newVoidFailures(cfg.Metrics), backoff: cfg.VoidBackoff, jitter: !cfg.NoJitter})
	if cfg.Register != nil {
		cfg.Register(workers)
	}
	rc := &river.Config{
		Logger:            cfg.Logger,
		FetchPollInterval: cfg.PollInterval,
		// A short cooldown lets a busy queue fetch again soon: River fetches
		// at most its free workers' worth of jobs per fetch.
		FetchCooldown: min(cfg.PollInterval, 10*time.Millisecond),
		Queues: map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: cfg.Workers},
			// Each environment has its queue, its workers and its
			// DeliveryWorkers attempt slots (environmentSlots): the
			// sandbox's jobs never hold a worker production needs. Twice
			// as many workers as slots, so that jobs waiting for a slot
			// leave workers for the jobs that need none (a superseded or
			// settled delivery, a company's deferral).
			enq.DeliveryQueue():        {MaxWorkers: 2 * cfg.DeliveryWorkers},
			enq.SandboxDeliveryQueue(): {MaxWorkers: 2 * cfg.DeliveryWorkers},
			enq.VoidQueue():            {MaxWorkers: cfg.VoidWorkers},
		},
		Workers: workers,
		// The default of kinds that set none; deliveries and sweeps set
		// their own (Timeout).
		JobTimeout: deliveryTimeout,
		// A job whose process died mid-run is retried after this long (once
		// River's rescuer looks), so a crash during a job delays it but
		// never loses it. Deliveries are rescued sooner (stuckDeliveries).
		RescueStuckJobsAfter: rescueAfter,
	}
	if !cfg.NoPeriodic {
		rc.PeriodicJobs = sweepJobs()
	}
	inFlight := &jobsInFlight{}
	rc.Middleware = append(rc.Middleware, inFlight)
	var q *Queue
	if db.Dialect() == sqldb.Postgres {
		q, err = newQueue(riverpgxv5.New(db.PgxPool()), rc)
	} else {
		// SQLite has no LISTEN/NOTIFY; River polls.
		rc.PollOnly = true
		q, err = newQueue(riversqlite.New(db.SQLDB()), rc)
	}
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	q.rescuer.queue, q.rescuer.log = enq.DeliveryQueue(), cfg.Logger
	q.inFlight = inFlight
	if cfg.CountCompaction == 0 {
		cfg.CountCompaction = time.Second
	}
	if cfg.CountCompaction > 0 {
		q.compactor = &countCompactor{upkeep: app.Upkeep, log: cfg.Logger, every: cfg.CountCompaction}
	}
	return q, nil
}

func newQueue[TTx any](driver riverdriver.Driver[TTx], rc *river.Config) (*Queue, error) {
	c, err := river.NewClient(driver, rc)
	if err != nil {
		return nil, err
	}
	return &Queue{start: c.Start, stop: c.Stop, cancel: c.StopAndCancel, rescuer: &stuckDeliveries{exec: driver.GetExecutor()}}, nil
}

// Start begins working jobs until Stop.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.start(ctx); err != nil {
		return err
	}
	if q.compactor != nil {
		q.compactor.start()
	}
	q.rescuer.start()
	return nil
}

// Stop lets running jobs finish (bounded by ctx) and stops fetching new ones.
func (q *Queue) Stop(ctx context.Context) error {
	if q.compactor != nil {
		q.compactor.stop()
	}
	q.rescuer.stop()
	ctx, cancel := q.inFlight.stopContext(ctx)
	defer cancel()
	return q.stop(ctx)
}

// StopAndCancel cancels running jobs and waits for them to return; jobs
// cut short stay in the queue and run again on the next start.
func (q *Queue) StopAndCancel(ctx context.Context) error {
	if q.compactor != nil {
		q.compactor.stop()
	}
	q.rescuer.stop()
	return q.cancel(ctx)
}

type deps struct {
	app           App
	log           *slog.Logger
	sweepFailures *prometheus.CounterVec
}
