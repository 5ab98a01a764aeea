package jobs

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"parcela"
)

// The periodic jobs. The sweeps find their rows by the injected clock, so
// tests drive them by moving the clock and calling the sweep use cases.

// ExpirePaymentsArgs expires unpaid payments past their expiry.
type ExpirePaymentsArgs struct{}

// Kind names the job.
func (ExpirePaymentsArgs) Kind() string { return "expire_payments" }

// MarkOverdueArgs moves unpaid installments past due to overdue.
type MarkOverdueArgs struct{}

// Kind names the job.
func (MarkOverdueArgs) Kind() string { return "mark_overdue" }

// IssueInstallmentsArgs issues installment payments inside their window.
type IssueInstallmentsArgs struct{}

// Kind names the job.
func (IssueInstallmentsArgs) Kind() string { return "issue_installments" }

// LapseFirstBillsArgs cancels billings whose first bill went unpaid past
// its due date with nothing to pay it with.
type LapseFirstBillsArgs struct{}

// Kind names the job.
func (LapseFirstBillsArgs) Kind() string { return "lapse_first_bills" }

// CleanupIdempotencyArgs deletes idempotency records past their 24 hours.
type CleanupIdempotencyArgs struct{}

// Kind names the job.
func (CleanupIdempotencyArgs) Kind() string { return "cleanup_idempotency_keys" }

// RecoverIntentsArgs voids payment intents whose issue was cut short.
type RecoverIntentsArgs struct{}

// Kind names the job.
func (RecoverIntentsArgs) Kind() string { return "recover_payment_intents" }

// sweepWorker runs one sweep, logs how much it did and every row it failed
// on (by id, never a customer's data), and counts the failures. A row's
// failure is the sweep's business (recorded, retried with backoff), not
// the job's: only the sweep itself failing fails the job.
type sweepWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	deps  *deps
	what  string
	sweep func(context.Context) (parcela.SweepReport, error)
}

// Timeout: a sweep may take longer than a delivery; one still running past
// this is cut short, and runs again at its next period.
func (w *sweepWorker[T]) Timeout(*river.Job[T]) time.Duration { return time.Minute }

func (w *sweepWorker[T]) Work(ctx context.Context, _ *river.Job[T]) error {
	r, err := w.sweep(ctx)
	if r.Moved > 0 {
		w.deps.log.Info(w.what, "count", r.Moved)
	}
	for _, f := range r.Failed {
		w.deps.log.Warn("sweep failed on a row; it is retried later", "sweep", f.Sweep, "id", f.Row.ID, "bill_id", f.Row.BillID,
			"company_id", f.Row.Auth.CompanyID, "environment", string(f.Row.Auth.Environment), "failures", f.Failures,
			"retry_at", f.Retry, "error", f.Err.Error())
		w.deps.sweepFailures.WithLabelValues(f.Sweep).Inc()
	}
	return err
}

// housekeeping is a store task that counts what it did, run as a sweep
// that fails on no row.
func housekeeping(run func(context.Context) (int, error)) func(context.Context) (parcela.SweepReport, error) {
	return func(ctx context.Context) (parcela.SweepReport, error) {
		n, err := run(ctx)
		return parcela.SweepReport{Moved: n}, err
	}
}

// newSweepFailures is the sweeps' failure counter, registered with reg
// when there is one.
func newSweepFailures(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parcela_sweep_failures_total", Help: "Rows a periodic sweep failed on (each retried later with backoff), by sweep.",
	}, []string{"sweep"})
	// At 0 from the start, as the operations listener documents it: a
	// series that appears only with the first failure leaves an operator
	// reading /metrics nothing to find, and a rate over it no baseline.
	for _, sweep := range parcela.SweepNames {
		c.WithLabelValues(sweep)
	}
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

func addSweepWorkers(w *river.Workers, d *deps) {
	river.AddWorker(w, &sweepWorker[ExpirePaymentsArgs]{deps: d, what: "payments expired", sweep: d.app.Sweeps.ExpireDuePayments})
	river.AddWorker(w, &sweepWorker[MarkOverdueArgs]{deps: d, what: "bills overdue", sweep: d.app.Sweeps.MarkOverdue})
	river.AddWorker(w, &sweepWorker[IssueInstallmentsArgs]{deps: d, what: "installment payments issued", sweep: d.app.Sweeps.IssueDueInstallments})
	river.AddWorker(w, &sweepWorker[RecoverIntentsArgs]{deps: d, what: "payment intents voided", sweep: d.app.Sweeps.RecoverIntents})
	river.AddWorker(w, &sweepWorker[CleanupIdempotencyArgs]{deps: d, what: "expired idempotency keys deleted", sweep: housekeeping(d.app.Upkeep.DeleteExpiredIdempotencyKeys)})
	river.AddWorker(w, &sweepWorker[LapseFirstBillsArgs]{deps: d, what: "first bills lapsed", sweep: d.app.Sweeps.LapseFirstBills})
}

func sweepJobs() []*river.PeriodicJob {
	every := func(d time.Duration, args river.JobArgs) *river.PeriodicJob {
		return river.NewPeriodicJob(river.PeriodicInterval(d),
			func() (river.JobArgs, *river.InsertOpts) { return args, nil },
			&river.PeriodicJobOpts{RunOnStart: true})
	}
	return []*river.PeriodicJob{
		every(time.Minute, ExpirePaymentsArgs{}),
		every(time.Minute, MarkOverdueArgs{}),
		every(10*time.Minute, IssueInstallmentsArgs{}),
		every(time.Minute, RecoverIntentsArgs{}),
		every(time.Minute, LapseFirstBillsArgs{}),
		every(10*time.Minute, CleanupIdempotencyArgs{}),
	}
}
