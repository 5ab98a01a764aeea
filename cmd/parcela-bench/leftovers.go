package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/riverqueue/river"
)

// A run killed in the webhook scenario (SIGKILL, a crash) cannot run its
// deferred clean-up, and a reused database (--reuse) then starts the next
// run with the delivery queue paused and the dead run's subscriptions still
// fanning out to a receiver that is gone. clearLeftovers undoes both before
// the webhook scenario subscribes.
func (b *bench) clearLeftovers(ctx context.Context, srv *parcelaServer, s *seeded, w *worker) error {
	if hold, err := openQueueHold(ctx, srv.dsn); err == nil {
		paused, perr := hold.paused(ctx)
		if errors.Is(perr, river.ErrNotFound) {
			paused, perr = false, nil // no delivery has run on this database yet
		}
		if perr == nil && paused {
			b.logf("webhooks: the delivery queue %q was left paused by an earlier run; resuming it", hold.queue)
			perr = hold.resume(ctx)
		}
		hold.close()
		if perr != nil {
			return fmt.Errorf("delivery queue: %w", perr)
		}
	}
	body, err := w.do(ctx, "GET", srv.sandbox+"/external_api/v1/webhooks", s.token, nil, 200)
	if err != nil {
		return err
	}
	var hooks []struct{ ID, Name string }
	if err := json.Unmarshal(body, &hooks); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	for _, h := range hooks {
		if strings.HasPrefix(h.Name, benchWebhookPrefix) {
			b.logf("webhooks: deleting %q, left by an earlier run", h.Name)
			if _, err := w.do(ctx, "DELETE", srv.sandbox+"/external_api/v1/webhooks/"+h.ID, s.token, nil, 204); err != nil {
				return err
			}
		}
	}
	return nil
}

// benchWebhookPrefix starts the name of every webhook the harness creates.
const benchWebhookPrefix = "bench "
