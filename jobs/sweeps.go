package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// Each sweep is a periodic job over the store. They find their rows by the
// injected clock, so tests drive them by moving the clock and calling the
// store methods.

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

// sweepWorker runs one store sweep and logs how much it did.
type sweepWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	deps  *deps
	what  string
	sweep func(context.Context) (int, error)
}

func (w *sweepWorker[T]) Work(ctx context.Context, _ *river.Job[T]) error {
	n, err := w.sweep(ctx)
	if n > 0 {
		w.deps.log.Info(w.what, "count", n)
	}
	return err
}

func addSweepWorkers(w *river.Workers, d *deps) {
	river.AddWorker(w, &sweepWorker[ExpirePaymentsArgs]{deps: d, what: "payments expired", sweep: d.db.ExpireDuePayments})
	river.AddWorker(w, &sweepWorker[MarkOverdueArgs]{deps: d, what: "bills overdue", sweep: d.db.MarkOverdue})
	river.AddWorker(w, &sweepWorker[IssueInstallmentsArgs]{deps: d, what: "installment payments issued", sweep: d.db.IssueDueInstallments})
	river.AddWorker(w, &sweepWorker[CleanupIdempotencyArgs]{deps: d, what: "expired idempotency keys deleted", sweep: d.db.DeleteExpiredIdempotencyKeys})
}

// CleanupIdempotencyArgs deletes idempotency records past their 24 hours.
type CleanupIdempotencyArgs struct{}

// Kind names the job.
func (CleanupIdempotencyArgs) Kind() string { return "cleanup_idempotency_keys" }

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
		every(10*time.Minute, CleanupIdempotencyArgs{}),
	}
}
