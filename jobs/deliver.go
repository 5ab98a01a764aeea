package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"parcela"
	"parcela/webhook"
)

// DeliveryArgs is the River job that makes one attempt of one delivery, or
// the first attempts of a batch of them. Generation must match the
// delivery's, so a superseded job stands down; and Attempt (the attempt of
// the generation it makes, from 1) must be the delivery's next, so a job
// run again after its attempt was recorded sends nothing more and queues
// no second retry.
//
// A batch (the new deliveries of one transaction, up to maxBatch) costs
// River one fetch and one completion for all of them: per delivery, those
// cost about as much as the attempt itself.
type DeliveryArgs struct {
	DeliveryID string `json:"delivery_id,omitempty"`
	Generation int    `json:"generation,omitempty"`
	// Attempt is 0 in the jobs queued before it was written: they attempt
	// whatever the delivery's next attempt is, as they always did.
	Attempt int `json:"attempt,omitempty"`
	// Batch holds deliveries at generation 0 to attempt for the first time.
	Batch []string `json:"batch,omitempty"`
}

// Kind names the job in River's table.
func (DeliveryArgs) Kind() string { return "deliver_webhook" }

// deliveryOutcomes are parcela_webhook_deliveries_total's outcomes: the
// sender's, and the attempts not sent (skipped: the webhook disabled or
// deleted; deferred: over the company's share or the slots).
var deliveryOutcomes = []string{string(webhook.OutcomeDelivered), string(webhook.OutcomeRetry), string(webhook.OutcomeGone),
	string(webhook.OutcomeBlocked), "skipped", "deferred"}

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
	// Every outcome from the start, at 0: a rate over a series that
	// appears at its first attempt misses that attempt, and an alert on
	// "blocked" has nothing to read until then.
	for _, o := range deliveryOutcomes {
		m.outcomes.WithLabelValues(o)
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
	slots      environmentSlots
	// startBudget is batchStartBudget (tests shorten it).
	startBudget time.Duration
	log         *slog.Logger // nil: none
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

// deliveryItem is one delivery a job attempts.
type deliveryItem struct {
	id         string
	generation int
	// attempt is the attempt of the generation the item makes (0: any), which
	// a run of the job that finds it made (a job snoozed or retried after
	// some of its items went out, or rescued) skips. A batch's items make
	// their deliveries' first.
	attempt int
}

func (a DeliveryArgs) items() []deliveryItem {
	if len(a.Batch) == 0 {
		return []deliveryItem{{id: a.DeliveryID, generation: a.Generation, attempt: a.Attempt}}
	}
	items := make([]deliveryItem, len(a.Batch))
	for i, id := range a.Batch {
		items[i] = deliveryItem{id: id, attempt: 1}
	}
	return items
}

// batchParallelism is how many of a batch's deliveries are sent at once
// (the records of those sent are written meanwhile, group-committed): with
// every River worker on a batch, all their deliveries at once
// would far outnumber the attempt slots and the companies' places, and
// those waiting past slotWait (or a company's burst) would be deferred.
const batchParallelism = 4

// batchStartBudget is how long after a batch job began its attempts may
// still begin: one begun later could outlast the job's timeout (a slot, a
// place and the request itself may each take their longest). The rest wait
// budgetSnooze for the job's next run.
const (
	batchStartBudget = deliveryTimeout - webhook.DefaultTimeout - slotWait - fastAttempt - time.Second
	budgetSnooze     = 100 * time.Millisecond
)

// Work attempts the job's deliveries, a batch's batchParallelism at a
// time. The job completes once each has been attempted and recorded; items
// deferred (their company over its share, every attempt slot taken, or the
// start budget spent) snooze the job for the soonest of their waits, and
// its next run skips those already attempted.
func (w *deliverWorker) Work(ctx context.Context, job *river.Job[DeliveryArgs]) error {
	began := time.Now() // the job's timeout runs from here
	items := job.Args.items()
	if len(items) == 1 {
		work, err := w.deliveries.DeliveryWork(ctx, items[0].id)
		if err != nil {
			return err
		}
		snooze, record := w.attempt(ctx, items[0], work)
		if record != nil {
			return record()
		}
		if snooze > 0 {
			return river.JobSnooze(snooze)
		}
		return nil
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.id
	}
	works, err := w.deliveries.DeliveryWorks(ctx, ids)
	if err != nil {
		return err
	}
	byID := make(map[string]*parcela.DeliveryWork, len(works))
	for _, wk := range works {
		byID[wk.Delivery.ID] = wk
	}
	snoozes := make([]time.Duration, len(items))
	errs := make([]error, len(items))
	var next atomic.Int32
	var sends, records sync.WaitGroup
	for range min(len(items), batchParallelism) {
		sends.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(items); i = int(next.Add(1)) - 1 {
				if time.Since(began) >= w.startBudget {
					// Begun now, the attempt could outlast the job's timeout:
					// the next run of the job makes it.
					snoozes[i] = budgetSnooze
					continue
				}
				work := byID[items[i].id]
				if work == nil {
					errs[i] = fmt.Errorf("delivery %s not found", items[i].id)
					continue
				}
				var record func() error
				if snoozes[i], record = w.attempt(ctx, items[i], work); record != nil {
					records.Go(func() { errs[i] = record() })
				}
			}
		})
	}
	sends.Wait()
	records.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var snooze time.Duration
	for _, s := range snoozes {
		if s > 0 && (snooze == 0 || s < snooze) {
			snooze = s
		}
	}
	if snooze > 0 {
		return river.JobSnooze(snooze)
	}
	return nil
}

// attempt makes one attempt of it (read as work), unless its delivery
// moved on, and returns the attempt's record to write (nil if none), or,
// if it was deferred, how long to snooze. The record is left to the caller
// so that a batch's attempts go on while earlier ones are written.
func (w *deliverWorker) attempt(ctx context.Context, it deliveryItem, work *parcela.DeliveryWork) (time.Duration, func() error) {
	d := work.Delivery
	if d.Generation != it.generation || d.Status == parcela.DeliveryDelivered || d.Status == parcela.DeliveryFailed ||
		(it.attempt > 0 && d.AttemptCount+1 != it.attempt) {
		return 0, nil // superseded by a manual retry, already settled, or this attempt already made
	}
	now := time.Now()
	if work.Deleted || !work.Webhook.Enabled {
		reason := "not sent: the webhook is disabled"
		if work.Deleted {
			reason = "not sent: the webhook was deleted"
		}
		w.metrics.outcomes.WithLabelValues("skipped").Inc()
		return 0, func() error {
			return w.deliveries.RecordAttempt(ctx, work, parcela.AttemptResult{At: now, Error: &reason, SkipReason: reason})
		}
	}
	if ctx.Err() != nil {
		// The job is canceled (parcela stopping): sent now, the request
		// would fail at once and be recorded as an attempt the receiver
		// never saw, a step of its schedule used up and its webhook marked
		// failing. The job's next run makes it.
		return budgetSnooze, nil
	}
	// An attempt takes one of the process's attempt slots, then one of its
	// company's places: a company over its share waits its turn, the
	// others' deliveries go on. Both are given back once the request is
	// done: recording it is the database's work, not the receiver's.
	share := d.CompanyID + "/" + string(d.Environment)
	slots := w.slots.of(d.Environment)
	// A company already past its share, or whose attempts are slow, does
	// not wait for a slot: its attempt is deferred at once, so that its
	// surplus does not hold the job (and River's worker) for a second per
	// attempt while other companies' jobs wait behind it in the queue
	// (TestBusyCompanyBacklogDoesNotDelayOthers).
	if !slots.tryTake() && (w.shares.pastShare(share) || w.shares.slow(share) || !slots.take(ctx)) {
		w.metrics.outcomes.WithLabelValues("deferred").Inc()
		return minShareSnooze, nil
	}
	began, ok, wait := w.shares.await(ctx, share) // the worker's own pace, not business time
	if !ok {
		slots.give()
		w.metrics.outcomes.WithLabelValues("deferred").Inc()
		return wait, nil
	}
	body := appendEnvelope(make([]byte, 0, len(work.Event.Data)+256), &work.Event)
	res := w.sender.Send(ctx, webhook.Request{
		URL: work.Webhook.URL, Method: strings.ToUpper(work.Webhook.Verb), MsgID: work.Event.ID, Timestamp: now,
		Body: body, Secrets: work.Webhook.Secrets(w.clock.Now()),
	})
	w.shares.release(share, began, res.Duration)
	slots.give()
	w.metrics.outcomes.WithLabelValues(string(res.Outcome)).Inc()
	w.metrics.latency.Observe(res.Duration.Seconds())
	r := parcela.AttemptResult{At: now, Duration: res.Duration, Delivered: res.Outcome == webhook.OutcomeDelivered, Gone: res.Outcome == webhook.OutcomeGone}
	if res.StatusCode != 0 {
		r.Status = &res.StatusCode
	}
	if res.Error != "" {
		r.Error = &res.Error
	}
	if res.Detail != "" && w.log != nil {
		// The company's log says why in its words; what Go said (the
		// address dialled, the resolver) is the operator's, by ids only.
		w.log.Debug("webhook attempt failed", "delivery_id", d.ID, "webhook_id", work.Webhook.ID, "outcome", string(res.Outcome), "detail", res.Detail)
	}
	if res.ResponseBody != "" {
		r.ResponseBody = &res.ResponseBody
	}
	if !r.Delivered && !r.Gone {
		delay, ok := webhook.RetryDelay(d.AttemptCount+1, w.jitter)
		if res.StatusCode == 0 && errors.Is(ctx.Err(), context.Canceled) {
			// parcela stopping cut the attempt short before any answer:
			// not the receiver's failure, and its error says the delivery
			// is retried. It is, as soon as a first failure is: its step of
			// the schedule put the event off up to 10 h (the sixth), and
			// the last one's marked it failed, never sent again (audits).
			delay, ok = webhook.RetryDelay(1, w.jitter)
			r.Interrupted = true
		}
		if ok {
			delay = max(delay, res.RetryAfter)
			next := time.Now().Add(delay)
			r.NextAt = &next
		}
	}
	return 0, func() error {
		// Record even when the job was canceled mid-request (shutdown):
		// the attempt happened, and its retry must be scheduled.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
		return w.deliveries.RecordAttempt(rctx, work, r)
	}
}
