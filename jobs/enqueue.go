package jobs

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"parcela"
	"parcela/sqldb"
)

// DeliveryQueue is the River queue of webhook deliveries: its own, so slow
// receivers never hold up the sweeps, and wide, because deliveries mostly
// wait on the network.
const DeliveryQueue = "webhooks"

// Enqueuer inserts jobs inside the store's transactions (it is the store's
// sqldb.Enqueuer), so a job exists if and only if the change that caused it
// committed. It needs no connection of its own: River inserts through the
// transaction, so it is built before the store, and the store gets it at
// Open.
type Enqueuer struct {
	queue  string
	voids  string
	sqlite *river.Client[*sql.Tx]
	pgx    *river.Client[pgx.Tx]
}

// NewEnqueuer returns an enqueuer that puts deliveries on deliveryQueue
// (DeliveryQueue when empty; tests sharing one PostgreSQL database each
// work their own), and voids on VoidQueue (deliveryQueue + "_voids"
// beside another delivery queue, so such a test works its own voids too).
func NewEnqueuer(deliveryQueue string) (*Enqueuer, error) {
	if deliveryQueue == "" {
		deliveryQueue = DeliveryQueue
	}
	// Clients without a pool only insert, and only in a transaction.
	lite, err := river.NewClient(riversqlite.New(nil), &river.Config{})
	if err != nil {
		return nil, fmt.Errorf("job enqueuer: %w", err)
	}
	pg, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		return nil, fmt.Errorf("job enqueuer: %w", err)
	}
	voids := VoidQueue
	if deliveryQueue != DeliveryQueue {
		voids = deliveryQueue + "_voids"
	}
	return &Enqueuer{queue: deliveryQueue, voids: voids, sqlite: lite, pgx: pg}, nil
}

var _ sqldb.Enqueuer = (*Enqueuer)(nil)

// DeliveryQueue names the queue production's deliveries go to.
func (e *Enqueuer) DeliveryQueue() string { return e.queue }

// SandboxDeliveryQueue names the queue the sandbox's deliveries go to.
func (e *Enqueuer) SandboxDeliveryQueue() string { return sandboxQueue(e.queue) }

// DeliveryQueues are the queues of both environments' deliveries beside
// the delivery queue q (production's, then the sandbox's).
func DeliveryQueues(q string) []string { return []string{q, sandboxQueue(q)} }

// sandboxQueue is the sandbox's queue beside the delivery queue q. Each
// environment has River workers of its own: in one queue, the sandbox's
// jobs fetched while production had none queued waited in the workers for
// a sandbox slot (slotWait, up to a batch's start budget) whenever sandbox
// receivers hung, and a production event then found no worker free,
// whatever its priority (an audit: 2.7 s, against 22 ms without them).
// Jobs enqueued before it in q are worked there as they were.
func sandboxQueue(q string) string { return q + "_sandbox" }

// queueFor is the queue of env's deliveries beside the delivery queue q.
func queueFor(q string, env parcela.Environment) string {
	if env == parcela.Sandbox {
		return sandboxQueue(q)
	}
	return q
}

// VoidQueue names the queue voids go to.
func (e *Enqueuer) VoidQueue() string { return e.voids }

// EnqueueVoids inserts one void job per payment, in tx.
func (e *Enqueuer) EnqueueVoids(ctx context.Context, tx *sqldb.Tx, voids []parcela.CancelRequest) error {
	params := make([]river.InsertManyParams, len(voids))
	for i, v := range voids {
		params[i] = river.InsertManyParams{Args: VoidArgs{PaymentID: v.PaymentID, Environment: v.Environment}, InsertOpts: voidInsertOpts(e.voids)}
	}
	return e.InsertTx(ctx, tx, params)
}

// maxBatch bounds the deliveries of one batch job, so a transaction that
// fans out to thousands spreads them over several workers.
const maxBatch = 32

// EnqueueDeliveries inserts the jobs of deliveries, in tx.
func (e *Enqueuer) EnqueueDeliveries(ctx context.Context, tx *sqldb.Tx, jobs []sqldb.DeliveryJob) error {
	return e.InsertTx(ctx, tx, deliveryParams(e.queue, jobs))
}

// deliveryPriority is a delivery job's River priority: River fetches a
// queue's jobs by priority first, so in the queue of jobs enqueued before
// each environment had its own (sandboxQueue) a sandbox backlog never
// stands before production's deliveries.
func deliveryPriority(env parcela.Environment) int {
	if env == parcela.Sandbox {
		return 2
	}
	return 1
}

// deliveryParams makes the River jobs of deliveries on queue: the first
// attempts due now in batches of up to maxBatch (one job each, of one
// environment), the others (retries, manual retries) one job per delivery.
func deliveryParams(queue string, jobs []sqldb.DeliveryJob) []river.InsertManyParams {
	params := make([]river.InsertManyParams, 0, len(jobs))
	var batch []string
	var batchEnv parcela.Environment
	flush := func() {
		opts := &river.InsertOpts{Queue: queueFor(queue, batchEnv), Priority: deliveryPriority(batchEnv)}
		switch len(batch) {
		case 0:
		case 1:
			params = append(params, river.InsertManyParams{Args: DeliveryArgs{DeliveryID: batch[0], Attempt: 1}, InsertOpts: opts})
		default:
			params = append(params, river.InsertManyParams{Args: DeliveryArgs{Batch: batch}, InsertOpts: opts})
		}
		batch = nil
	}
	for _, j := range jobs {
		if j.At == nil && j.Generation == 0 {
			if len(batch) > 0 && j.Environment != batchEnv {
				flush()
			}
			batchEnv = j.Environment
			if batch = append(batch, j.DeliveryID); len(batch) == maxBatch {
				flush()
			}
			continue
		}
		opts := &river.InsertOpts{Queue: queueFor(queue, j.Environment), Priority: deliveryPriority(j.Environment)}
		if j.At != nil {
			opts.ScheduledAt = *j.At
		}
		params = append(params, river.InsertManyParams{Args: DeliveryArgs{DeliveryID: j.DeliveryID, Generation: j.Generation, Attempt: j.Attempt}, InsertOpts: opts})
	}
	flush()
	return params
}

// InsertTx inserts jobs in tx.
func (e *Enqueuer) InsertTx(ctx context.Context, tx *sqldb.Tx, params []river.InsertManyParams) error {
	var err error
	if ptx := tx.PgxTx(); ptx != nil {
		_, err = e.pgx.InsertManyTx(ctx, ptx, params)
	} else {
		_, err = e.sqlite.InsertManyTx(ctx, tx.SQLTx(), params)
	}
	return err
}
