package jobs

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"parcela"
	"parcela/webhook"
)

// DeliveryArgs is the River job that makes one attempt of one delivery.
// Generation must match the delivery's, so a superseded job stands down.
type DeliveryArgs struct {
	DeliveryID string `json:"delivery_id"`
	Generation int    `json:"generation"`
}

// Kind names the job in River's table.
func (DeliveryArgs) Kind() string { return "deliver_webhook" }

// deliveryMetrics are the webhook delivery metrics.
type deliveryMetrics struct {
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
}

func newDeliveryMetrics(reg prometheus.Registerer, deliveries parcela.DeliveryService) *deliveryMetrics {
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
			n, err := deliveries.PendingDeliveries(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		})
		reg.MustRegister(m.outcomes, m.latency, depth)
	}
	return m
}

// deliverWorker sends one delivery attempt and records it.
type deliverWorker struct {
	river.WorkerDefaults[DeliveryArgs]
	deliveries parcela.DeliveryService
	clock      parcela.Clock
	sender     *webhook.Sender
	metrics    *deliveryMetrics
	jitter     func(time.Duration) time.Duration
	shares     *companyShares
}

// Timeout bounds one attempt: the sender's 15 s plus bookkeeping. A job
// still running well past it belongs to a dead process (rescueAfter).
func (w *deliverWorker) Timeout(*river.Job[DeliveryArgs]) time.Duration {
	return deliveryTimeout
}

// appendEnvelope appends e's envelope, the body of every notification
// (id, entity, event, api_version, created_at, data), to b as JSON. The event's data goes
// in as stored: the domain marshalled it, so it is valid compact JSON, and
// json.Marshal would only scan and copy it again on every attempt.
func appendEnvelope(b []byte, e *parcela.Event) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, e.ID)
	b = append(b, `,"entity":`...)
	b = appendJSONString(b, e.Entity)
	b = append(b, `,"event":`...)
	b = appendJSONString(b, e.Event)
	b = append(b, `,"api_version":"v1","created_at":"`...)
	b = e.CreatedAt.In(parcela.SaoPaulo).AppendFormat(b, parcela.TimestampLayout)
	b = append(b, `","data":`...)
	if len(e.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Data...)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, the rest (UTF-8 included) as is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[DeliveryArgs]) error {
	work, err := w.deliveries.DeliveryWork(ctx, job.Args.DeliveryID)
	if err != nil {
		return err
	}
	d := work.Delivery
	if d.Generation != job.Args.Generation || d.Status == parcela.DeliveryDelivered || d.Status == parcela.DeliveryFailed {
		return nil // superseded by a manual retry, or already settled
	}
	now := time.Now()
	if work.Deleted || !work.Webhook.Enabled {
		reason := "not sent: the webhook is disabled"
		if work.Deleted {
			reason = "not sent: the webhook was deleted"
		}
		w.metrics.outcomes.WithLabelValues("skipped").Inc()
		return w.deliveries.RecordAttempt(ctx, work, parcela.AttemptResult{At: now, Error: &reason, SkipReason: reason})
	}
	// A company over its share of the workers waits its turn; the others'
	// deliveries go on.
	share := d.CompanyID + "/" + string(d.Environment)
	began, ok, wait := w.shares.await(ctx, share) // the worker's own pace, not business time
	if !ok {
		w.metrics.outcomes.WithLabelValues("deferred").Inc()
		return river.JobSnooze(wait)
	}
	body := appendEnvelope(make([]byte, 0, len(work.Event.Data)+256), &work.Event)
	var took time.Duration
	defer func() { w.shares.release(share, began, took) }()
	res := w.sender.Send(ctx, webhook.Request{
		URL: work.Webhook.URL, Method: strings.ToUpper(work.Webhook.Verb), MsgID: work.Event.ID, Timestamp: now,
		Body: body, Secrets: work.Webhook.Secrets(w.clock.Now()),
	})
	took = res.Duration
	w.metrics.outcomes.WithLabelValues(string(res.Outcome)).Inc()
	w.metrics.latency.Observe(res.Duration.Seconds())
	r := parcela.AttemptResult{At: now, Duration: res.Duration, Delivered: res.Outcome == webhook.OutcomeDelivered, Gone: res.Outcome == webhook.OutcomeGone}
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
		if delay, ok := webhook.RetryDelay(d.AttemptCount+1, w.jitter); ok {
			delay = max(delay, res.RetryAfter)
			next := time.Now().Add(delay)
			r.NextAt = &next
		}
	}
	// Record even when the job was canceled mid-request (shutdown): the
	// attempt happened, and its retry must be scheduled.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	return w.deliveries.RecordAttempt(rctx, work, r)
}
