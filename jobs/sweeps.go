package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// Each sweep is a periodic job over the store. They find their rows by the
// injected clock, so tests drive them by moving the clock and calling the
// store methods, or by inserting these jobs.

// ExpirePaymentsArgs expires unpaid payments past their expiry.
type ExpirePaymentsArgs struct{}

// Kind names the job.
func (ExpirePaymentsArgs) Kind() string { return "expire_payments" }

type expirePaymentsWorker struct {
	river.WorkerDefaults[ExpirePaymentsArgs]
	deps *deps
}

func (w *expirePaymentsWorker) Work(ctx context.Context, _ *river.Job[ExpirePaymentsArgs]) error {
	n, err := w.deps.db.ExpireDuePayments(ctx)
	if n > 0 {
		w.deps.log.Info("payments expired", "count", n)
	}
	return err
}

// MarkOverdueArgs moves unpaid installments past due to overdue.
type MarkOverdueArgs struct{}

// Kind names the job.
func (MarkOverdueArgs) Kind() string { return "mark_overdue" }

type markOverdueWorker struct {
	river.WorkerDefaults[MarkOverdueArgs]
	deps *deps
}

func (w *markOverdueWorker) Work(ctx context.Context, _ *river.Job[MarkOverdueArgs]) error {
	n, err := w.deps.db.MarkOverdue(ctx)
	if n > 0 {
		w.deps.log.Info("bills overdue", "count", n)
	}
	return err
}

// IssueInstallmentsArgs issues installment payments inside their window.
type IssueInstallmentsArgs struct{}

// Kind names the job.
func (IssueInstallmentsArgs) Kind() string { return "issue_installments" }

type issueInstallmentsWorker struct {
	river.WorkerDefaults[IssueInstallmentsArgs]
	deps *deps
}

func (w *issueInstallmentsWorker) Work(ctx context.Context, _ *river.Job[IssueInstallmentsArgs]) error {
	n, err := w.deps.db.IssueDueInstallments(ctx)
	if n > 0 {
		w.deps.log.Info("installment payments issued", "count", n)
	}
	return err
}

func addSweepWorkers(w *river.Workers, d *deps) {
	river.AddWorker(w, &expirePaymentsWorker{deps: d})
	river.AddWorker(w, &markOverdueWorker{deps: d})
	river.AddWorker(w, &issueInstallmentsWorker{deps: d})
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
	}
}
