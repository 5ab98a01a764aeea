package jobs

import (
	"context"

	"github.com/riverqueue/river"
)

// CleanupIdempotencyArgs asks for expired idempotency records to be deleted.
type CleanupIdempotencyArgs struct{}

// Kind names the job in River's table.
func (CleanupIdempotencyArgs) Kind() string { return "cleanup_idempotency_keys" }

type cleanupIdempotencyWorker struct {
	river.WorkerDefaults[CleanupIdempotencyArgs]
	deps *deps
}

func (w *cleanupIdempotencyWorker) Work(ctx context.Context, job *river.Job[CleanupIdempotencyArgs]) error {
	n, err := w.deps.db.DeleteExpiredIdempotencyKeys(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		w.deps.log.Info("expired idempotency keys deleted", "count", n)
	}
	return nil
}
