package jobs

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// jobsInFlight counts the jobs this process is working, so that a stop
// whose grace has already run out (PARCELA_SHUTDOWN_TIMEOUT=0) tells an
// idle queue from one it cuts short: River's stop answers a past deadline
// as an error even when nothing runs.
type jobsInFlight struct {
	river.MiddlewareDefaults
	n atomic.Int64
}

func (j *jobsInFlight) Work(ctx context.Context, _ *rivertype.JobRow, doInner func(context.Context) error) error {
	j.n.Add(1)
	defer j.n.Add(-1)
	return doInner(ctx)
}

// idleStopTimeout bounds the stop of a queue with no job running: its
// fetchers and maintenance only have to return.
const idleStopTimeout = 5 * time.Second

// stopContext is ctx, or, when ctx has already ended and no job is
// running, a fresh context bounded by idleStopTimeout.
func (j *jobsInFlight) stopContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil || j.n.Load() > 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), idleStopTimeout)
}
