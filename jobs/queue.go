// Package jobs runs parcela's background work on River: webhook delivery and
// the maintenance sweeps. Jobs are inserted in the same transaction as the
// change that causes them (sqldb.Tx.Enqueue), so a job exists exactly when
// its cause committed.
package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
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
	PollInterval time.Duration // how often workers look for new jobs
	Workers      int           // concurrent jobs on the default queue
	// DeliveryWorkers is how many webhook deliveries run at once (default 100).
	DeliveryWorkers int
	// Register adds workers beyond parcela's own (tests use it).
	Register func(*river.Workers)
	// NoPeriodic leaves out the periodic sweeps (tests that drive them by hand).
	NoPeriodic bool
	// WebhookAllowedCIDRs opens private ranges to webhook delivery
	// (PARCELA_WEBHOOK_ALLOWED_CIDRS; development and tests only).
	WebhookAllowedCIDRs string
	// WebhookTimeout bounds one delivery attempt (default 15 s).
	WebhookTimeout time.Duration
	// Metrics, when set, receives the delivery metrics.
	Metrics prometheus.Registerer
	// NoJitter makes retry delays exact (tests).
	NoJitter bool
	// CountCompaction is how often bill count deltas are folded into the
	// per-hour counts (default 1 s; negative: never, for tests that fold by hand).
	CountCompaction time.Duration
}

// Queue is a River client on whichever database the store uses.
type Queue struct {
	start  func(context.Context) error
	stop   func(context.Context) error
	cancel func(context.Context) error
	insert func(context.Context, *sqldb.Tx, []river.InsertManyParams) error
	// compactor is nil when compaction is off.
	compactor *countCompactor
}

// New builds the queue and makes it the store's enqueuer.
func New(db *sqldb.DB, cfg Config) (*Queue, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
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
	workers := river.NewWorkers()
	deps := &deps{db: db, clock: db.Clock, log: cfg.Logger}
	addSweepWorkers(workers, deps)
	policy, err := webhook.NewAddressPolicy(cfg.WebhookAllowedCIDRs)
	if err != nil {
		return nil, fmt.Errorf("PARCELA_WEBHOOK_ALLOWED_CIDRS: %w", err)
	}
	if cfg.WebhookTimeout == 0 {
		cfg.WebhookTimeout = webhook.DefaultTimeout
	}
	dw := &deliverWorker{deps: deps, sender: webhook.NewSender(policy, cfg.WebhookTimeout), metrics: newDeliveryMetrics(cfg.Metrics, db), jitter: webhook.RandomJitter}
	if cfg.NoJitter {
		dw.jitter = nil
	}
	river.AddWorker(workers, dw)
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
			river.QueueDefault:     {MaxWorkers: cfg.Workers},
			db.DeliveryQueueName(): {MaxWorkers: cfg.DeliveryWorkers},
		},
		Workers:    workers,
		JobTimeout: time.Minute,
		// A job whose process died mid-run is retried after this long, so a
		// crash during a delivery delays it but never loses it.
		RescueStuckJobsAfter: 2 * time.Minute,
	}
	if !cfg.NoPeriodic {
		rc.PeriodicJobs = sweepJobs()
	}
	var q *Queue
	if db.Dialect() == sqldb.Postgres {
		q, err = newQueue(riverpgxv5.New(db.PgxPool()), rc, func(tx *sqldb.Tx) pgx.Tx { return tx.PgxTx() })
	} else {
		// SQLite has no LISTEN/NOTIFY; River polls.
		rc.PollOnly = true
		q, err = newQueue(riversqlite.New(db.SQLDB()), rc, func(tx *sqldb.Tx) *sql.Tx { return tx.SQLTx() })
	}
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	if cfg.CountCompaction == 0 {
		cfg.CountCompaction = time.Second
	}
	if cfg.CountCompaction > 0 {
		q.compactor = &countCompactor{db: db, log: cfg.Logger, every: cfg.CountCompaction}
	}
	db.Enqueue = q
	return q, nil
}

func newQueue[TTx any](driver riverdriver.Driver[TTx], rc *river.Config, unwrap func(*sqldb.Tx) TTx) (*Queue, error) {
	c, err := river.NewClient(driver, rc)
	if err != nil {
		return nil, err
	}
	return &Queue{
		start:  c.Start,
		stop:   c.Stop,
		cancel: c.StopAndCancel,
		insert: func(ctx context.Context, tx *sqldb.Tx, p []river.InsertManyParams) error {
			_, err := c.InsertManyTx(ctx, unwrap(tx), p)
			return err
		},
	}, nil
}

// InsertTx implements sqldb.Enqueuer.
func (q *Queue) InsertTx(ctx context.Context, tx *sqldb.Tx, p []river.InsertManyParams) error {
	return q.insert(ctx, tx, p)
}

// Start begins working jobs until Stop.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.start(ctx); err != nil {
		return err
	}
	if q.compactor != nil {
		q.compactor.start()
	}
	return nil
}

// Stop lets running jobs finish (bounded by ctx) and stops fetching new ones.
func (q *Queue) Stop(ctx context.Context) error {
	if q.compactor != nil {
		q.compactor.stop()
	}
	return q.stop(ctx)
}

// StopAndCancel cancels running jobs and waits for them to return; jobs
// cut short stay in the queue and run again on the next start.
func (q *Queue) StopAndCancel(ctx context.Context) error {
	if q.compactor != nil {
		q.compactor.stop()
	}
	return q.cancel(ctx)
}

type deps struct {
	db    *sqldb.DB
	clock parcela.Clock
	log   *slog.Logger
}
