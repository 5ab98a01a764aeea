package jobs

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"parcela"
	"parcela/sqldb"
	"parcela/webhook"
)

// deliveryMetrics are the webhook delivery metrics.
type deliveryMetrics struct {
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
}

func newDeliveryMetrics(reg prometheus.Registerer, db *sqldb.DB) *deliveryMetrics {
	m := &deliveryMetrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parcela_webhook_deliveries_total", Help: "Webhook delivery attempts by outcome.",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "parcela_webhook_attempt_duration_seconds", Help: "Webhook delivery attempt latency.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15},
		}),
	}
	if reg != nil {
		depth := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "parcela_webhook_queue_depth", Help: "Webhook deliveries waiting to be sent (pending or retrying).",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := db.PendingDeliveries(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		})
		reg.MustRegister(m.outcomes, m.latency, depth)
	}
	return m
}

type deliverWorker struct {
	river.WorkerDefaults[sqldb.DeliveryArgs]
	deps    *deps
	sender  *webhook.Sender
	metrics *deliveryMetrics
	jitter  func(time.Duration) time.Duration
}

// Timeout bounds one attempt: the sender's 15 s plus bookkeeping.
func (w *deliverWorker) Timeout(*river.Job[sqldb.DeliveryArgs]) time.Duration {
	return webhook.DefaultTimeout + 15*time.Second
}

// Envelope is the body of every notification.
type Envelope struct {
	ID         string          `json:"id"`
	Entity     string          `json:"entity"`
	Event      string          `json:"event"`
	APIVersion string          `json:"api_version"`
	CreatedAt  string          `json:"created_at"`
	Data       json.RawMessage `json:"data"`
}

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[sqldb.DeliveryArgs]) error {
	work, err := w.deps.db.LoadDeliveryWork(ctx, job.Args.DeliveryID)
	if err != nil {
		return err
	}
	if work.Generation != job.Args.Generation || work.Delivery.Status == "delivered" || work.Delivery.Status == "failed" {
		return nil // superseded by a manual retry, or already settled
	}
	now := time.Now()
	if work.Deleted || !work.Webhook.Enabled {
		reason := "not sent: the webhook is disabled"
		if work.Deleted {
			reason = "not sent: the webhook was deleted"
		}
		w.metrics.outcomes.WithLabelValues("skipped").Inc()
		return w.deps.db.RecordAttempt(ctx, work, sqldb.AttemptResult{At: now, Error: &reason, SkipReason: reason})
	}
	body, err := json.Marshal(Envelope{
		ID: work.Event.ID, Entity: work.Event.Entity, Event: work.Event.Event, APIVersion: "v1",
		CreatedAt: time.UnixMilli(work.Event.CreatedAt).In(parcela.SaoPaulo).Format(parcela.TimestampLayout), Data: work.Event.Data,
	})
	if err != nil {
		return err
	}
	res := w.sender.Send(ctx, webhook.Request{
		URL: work.Webhook.URL, Method: strings.ToUpper(work.Webhook.Verb), MsgID: work.Event.ID, Timestamp: now,
		Body: body, Secrets: work.Webhook.Secrets(w.deps.clock.Now()),
	})
	w.metrics.outcomes.WithLabelValues(string(res.Outcome)).Inc()
	w.metrics.latency.Observe(res.Duration.Seconds())
	r := sqldb.AttemptResult{At: now, Duration: res.Duration, Delivered: res.Outcome == webhook.OutcomeDelivered, Gone: res.Outcome == webhook.OutcomeGone}
	if res.StatusCode != 0 {
		r.Status = &res.StatusCode
	}
	if res.Error != "" {
		r.Error = &res.Error
	}
	if res.ResponseBody != "" {
		r.ResponseBody = &res.ResponseBody
	}
	if !r.Delivered && !r.Gone {
		if delay, ok := webhook.RetryDelay(work.Delivery.AttemptCount+1, w.jitter); ok {
			delay = max(delay, res.RetryAfter)
			next := time.Now().Add(delay)
			r.NextAt = &next
		}
	}
	// Record even when the job was canceled mid-request (shutdown): the
	// attempt happened, and its retry must be scheduled.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return w.deps.db.RecordAttempt(rctx, work, r)
}
