package jobs

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"parcela"
)

// VoidQueue is the River queue of voids at the payment provider: its own,
// so a provider that is down holds up neither deliveries nor sweeps.
const VoidQueue = "provider_voids"

// VoidArgs is the River job that voids one canceled payment at its
// provider (parcela.Change.Voids), inserted with the change that canceled
// it.
type VoidArgs struct {
	PaymentID   string              `json:"payment_id"`
	Environment parcela.Environment `json:"environment"`
}

// Kind names the job in River's table.
func (VoidArgs) Kind() string { return "void_payment" }

const (
	// voidTimeout bounds one call to the provider: under rescueAfter, so
	// River's rescuer never takes a live void for a dead one.
	voidTimeout = 15 * time.Second
	// maxVoidBackoff caps the wait between attempts: a provider back
	// after a long outage is called again within the hour.
	maxVoidBackoff = time.Hour
	// voidAttempts is as many attempts as River can count (a smallint):
	// hourly, years of them. A canceled payment left payable at the bank
	// is a double payment waiting to happen, so a void is never given up.
	voidAttempts = math.MaxInt16
)

// voidWorker cancels a payment at the provider. Cancel is idempotent, so
// an attempt repeated after a crash or a retry is harmless; its error
// fails the attempt, which River retries with backoff (NextRetry).
type voidWorker struct {
	river.WorkerDefaults[VoidArgs]
	provider parcela.PaymentProvider
	log      *slog.Logger
	failures prometheus.Counter // failed attempts, each retried
	backoff  time.Duration      // before the first retry; doubles after each
	jitter   bool
}

func (w *voidWorker) Timeout(*river.Job[VoidArgs]) time.Duration { return voidTimeout }

func (w *voidWorker) Work(ctx context.Context, job *river.Job[VoidArgs]) error {
	err := w.provider.Cancel(ctx, parcela.CancelRequest{PaymentID: job.Args.PaymentID, Environment: job.Args.Environment})
	if err != nil {
		w.failures.Inc()
		w.log.Warn("void at the payment provider failed; it is retried", "payment_id", job.Args.PaymentID,
			"environment", string(job.Args.Environment), "attempt", job.Attempt, "error", err.Error())
	}
	return err
}

// NextRetry doubles the wait after each failed attempt, up to
// maxVoidBackoff, give or take a tenth so that voids failed together by
// one outage do not all call again at once.
func (w *voidWorker) NextRetry(job *river.Job[VoidArgs]) time.Time {
	d := maxVoidBackoff
	if n := job.Attempt - 1; n < 32 {
		d = min(w.backoff<<n, maxVoidBackoff)
	}
	if w.jitter {
		d += time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
	}
	return time.Now().Add(d)
}

// newVoidFailures counts failed voids, registered with reg when there is
// one: an operator sees a provider that refuses to cancel before a
// canceled boleto is paid.
func newVoidFailures(reg prometheus.Registerer) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "parcela_provider_void_failures_total",
		Help: "Attempts to void a canceled payment at the payment provider that failed (each retried with backoff until it succeeds).",
	})
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

// voidInsertOpts are a void job's options: its queue, and attempts enough
// never to be discarded.
func voidInsertOpts(queue string) *river.InsertOpts {
	return &river.InsertOpts{Queue: queue, MaxAttempts: voidAttempts}
}
