package parcela

import (
	"context"
	"time"
)

// FailingLimit is how long a webhook may fail everything before it is disabled.
const FailingLimit = 5 * 24 * time.Hour

// KeptAttempts is how many of a delivery's attempts a manual retry keeps
// (its latest): the log then holds at most these and one generation's
// schedule. Every retry added at least one attempt to a log kept whole, so
// a company retrying one delivery in a loop grew it without bound, and a
// read of it (the delivery, or a page of deliveries) held every attempt's
// error and body in memory at once.
const KeptAttempts = 100

// ListedAttempts is how many of a delivery's latest attempts a listing of
// deliveries shows (its attempts_total says how many are kept; GET
// /webhook_deliveries/{id} shows them all): a page of a thousand
// deliveries with every kept attempt, each up to 6 KiB of error and body,
// held gigabytes in memory to answer.
const ListedAttempts = 10

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryRetrying  = "retrying"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// DeliveryWork is everything a delivery attempt needs.
type DeliveryWork struct {
	Delivery Delivery
	Webhook  *Webhook
	Deleted  bool // the webhook was deleted
	Event    Event
}

// AttemptResult is the outcome of one delivery attempt, as the worker saw it.
type AttemptResult struct {
	At           time.Time
	Status       *int
	Duration     time.Duration
	Error        *string
	ResponseBody *string
	Delivered    bool
	Gone         bool       // 410: disable the webhook
	NextAt       *time.Time // when to try again; nil: no more tries
	SkipReason   string     // the attempt was not made (webhook disabled or deleted)
	// Interrupted: parcela stopping cut the attempt short before any
	// answer, no failure of the receiver's.
	Interrupted bool
}

// AttemptRecord is what the store writes for one attempt, in one
// transaction: the attempt, the delivery's next state (if the delivery is
// still at Generation; a manual retry supersedes the attempt otherwise),
// its retry, and the webhook's failure record.
type AttemptRecord struct {
	DeliveryID  string
	Environment Environment // its retry queues behind production's in the sandbox
	WebhookID   string
	Generation  int
	// Number is the attempt of the generation this is, from 1: the
	// delivery must have made the ones before it and no other. Two runs of
	// one job at once (a live job the rescuer took for dead) both make the
	// same attempt; the second to record it changes nothing.
	Number  int
	At      time.Time
	Attempt DeliveryAttempt
	Status  string     // delivered, retrying or failed
	RetryAt *time.Time // when retrying
	// Webhook is how the attempt bears on its webhook.
	Webhook WebhookHealth
}

// WebhookHealth is an attempt's effect on its webhook: a delivery clears
// its failure record, a failure starts one (if none), and the webhook is
// disabled at once (Disable) or once it has failed since FailingSince.
// Only while the webhook still has the URL the attempt was sent to: one
// moved elsewhere meanwhile (a PATCH while the attempt was under way) is
// not judged by its old address's answer.
type WebhookHealth struct {
	Skip          bool   // the attempt was not made: no effect
	URL           string // where the attempt was sent
	Delivered     bool
	Disable       string    // disable now with this reason
	DisableReason string    // otherwise, disable with this reason...
	FailingSince  time.Time // ...if failing since this instant or earlier
}

// recordOf decides what one attempt changes.
func recordOf(w *DeliveryWork, r AttemptResult, now time.Time) AttemptRecord {
	rec := AttemptRecord{
		DeliveryID: w.Delivery.ID, Environment: w.Delivery.Environment, WebhookID: w.Webhook.ID, Generation: w.Delivery.Generation, Number: w.Delivery.AttemptCount + 1, At: now,
		Attempt: DeliveryAttempt{AttemptedAt: r.At, ResponseStatus: r.Status, DurationMS: r.Duration.Milliseconds(), Error: r.Error, ResponseBody: r.ResponseBody},
		Status:  DeliveryFailed,
	}
	switch {
	case r.Delivered:
		rec.Status = DeliveryDelivered
	case r.NextAt != nil && !r.Gone && r.SkipReason == "":
		rec.Status, rec.RetryAt = DeliveryRetrying, r.NextAt
	}
	rec.Webhook.URL = w.Webhook.URL
	switch {
	case r.SkipReason != "", r.Interrupted:
		// An interrupted attempt counted toward the five days: one cut
		// short by a deploy disabled a webhook failing since five days
		// before, and the retry its error promised was skipped, the event
		// lost to the receiver (an audit).
		rec.Webhook.Skip = true
	case r.Delivered:
		rec.Webhook.Delivered = true
	case r.Gone:
		rec.Webhook.Disable = "the receiver answered 410 Gone"
	default:
		rec.Webhook.DisableReason, rec.Webhook.FailingSince = "every delivery failed for 5 days", now.Add(-FailingLimit)
	}
	return rec
}

// Deliveries is the webhook worker's use case: what an attempt needs, and
// what it changes.
type Deliveries struct {
	store DeliveryStore
	clock Clock
}

// NewDeliveries returns the delivery use cases.
func NewDeliveries(store DeliveryStore, clock Clock) *Deliveries {
	return &Deliveries{store: store, clock: clock}
}

var _ DeliveryService = (*Deliveries)(nil)

// DeliveryWork reads a delivery with its webhook and event.
func (s *Deliveries) DeliveryWork(ctx context.Context, id string) (*DeliveryWork, error) {
	return s.store.DeliveryWork(ctx, id)
}

// DeliveryWorks reads deliveries with their webhooks and events (a batch
// job's); an id not found is left out.
func (s *Deliveries) DeliveryWorks(ctx context.Context, ids []string) ([]*DeliveryWork, error) {
	return s.store.DeliveryWorks(ctx, ids)
}

// RecordAttempt stores an attempt and moves the delivery and its webhook
// on; a retry is scheduled in the same transaction, so none is lost or
// doubled.
func (s *Deliveries) RecordAttempt(ctx context.Context, w *DeliveryWork, r AttemptResult) error {
	return s.store.RecordAttempt(ctx, recordOf(w, r, s.clock.Now()))
}

// PendingDeliveries counts deliveries waiting to be sent.
func (s *Deliveries) PendingDeliveries(ctx context.Context) (int, error) {
	return s.store.PendingDeliveries(ctx)
}
