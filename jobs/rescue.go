package jobs

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"parcela/webhook"
)

// A job whose process died mid-run stays "running" in River's table until
// something rescues it. A delivery attempt lasts at most deliveryTimeout;
// past rescueAfter from its start, its process is dead, and the delivery is
// made available again. River's own rescuer (RescueStuckJobsAfter) does
// this for every kind, but looks only every 30 s, which could hold a
// delivery for nearly a minute; stuckDeliveries looks every
// rescueInterval, so a delivery held by a dead instance goes out again
// within rescueAfter + rescueInterval (27 s) and a fetch of its attempt's
// start: under 30 s.
const (
	// deliveryTimeout bounds one delivery job: the sender's 15 s and the
	// reads and writes around it.
	deliveryTimeout = webhook.DefaultTimeout + 5*time.Second
	// recordTimeout bounds the recording of an attempt, which runs after
	// the job's own context may have ended; a live job is therefore done
	// within deliveryTimeout + recordTimeout = rescueAfter.
	recordTimeout  = 5 * time.Second
	rescueAfter    = deliveryTimeout + recordTimeout
	rescueInterval = 2 * time.Second
)

// stuckDeliveries makes the delivery jobs of dead processes available
// again, through River's driver (its own SQL for either engine). Every
// instance runs it: two rescuing the same job set the same state, and a
// delivery sent twice is what at-least-once allows (the worker skips one
// already delivered).
type stuckDeliveries struct {
	exec   riverdriver.Executor
	queue  string
	log    *slog.Logger
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func (s *stuckDeliveries) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done.Go(func() {
		t := time.NewTicker(rescueInterval)
		defer t.Stop()
		for {
			n, err := s.rescue(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Error("rescue stuck deliveries", "error", err.Error())
			case n > 0:
				s.log.Warn("stuck deliveries of a dead process made available again", "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

func (s *stuckDeliveries) stop() {
	if s.cancel != nil {
		s.cancel()
		s.done.Wait()
	}
}

// rescue makes available every delivery job of the queues (both
// environments') running since
// before rescueAfter ago, and returns how many.
func (s *stuckDeliveries) rescue(ctx context.Context) (int, error) {
	now := time.Now().UTC()
	horizon := now.Add(-rescueAfter)
	const batch = 100
	rescued := 0
	var after int64
	for {
		stuck, err := s.exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{AfterID: after, Max: batch, StuckHorizon: horizon})
		if err != nil {
			return rescued, err
		}
		p := &riverdriver.JobRescueManyParams{StuckHorizon: horizon}
		for _, j := range stuck {
			after = j.ID
			// A job out of attempts is River's to discard.
			if j.Queue != s.queue && j.Queue != sandboxQueue(s.queue) || j.Kind != (DeliveryArgs{}).Kind() || j.Attempt >= j.MaxAttempts {
				continue
			}
			e, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: j.Attempt, Error: "its process died mid-attempt; made available again"})
			if err != nil {
				return rescued, err
			}
			p.ID, p.Error = append(p.ID, j.ID), append(p.Error, e)
			p.FinalizedAt, p.ScheduledAt = append(p.FinalizedAt, nil), append(p.ScheduledAt, now)
			p.State = append(p.State, string(rivertype.JobStateAvailable))
		}
		if len(p.ID) > 0 {
			if _, err := s.exec.JobRescueMany(ctx, p); err != nil {
				return rescued, err
			}
			rescued += len(p.ID)
		}
		if len(stuck) < batch {
			return rescued, nil
		}
	}
}
