package jobs

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
	"parcela/webhook"
)

// hookRig is a delivery worker over a real store, run by hand: each
// work() is one run of a delivery's job, as River would start it, so a test
// walks the retry schedule without waiting for it.
type hookRig struct {
	t      *testing.T
	db     *sqldb.DB
	app    *parcela.Services
	clock  *parcela.TestClock
	a      parcela.Auth
	worker *deliverWorker
	tape   *jobTape

	mu       sync.Mutex
	received []http.Header // every request the receiver got, in order
	bodies   [][]byte
	methods  []string
	answer   func(n int, w http.ResponseWriter) // the receiver's answer to its n-th request (from 1)
	srv      *httptest.Server
}

// jobTape is an enqueuer that keeps the delivery jobs it is given, as
// River would get them, for a test to run by hand.
type jobTape struct {
	mu   sync.Mutex
	jobs []DeliveryArgs
}

func (j *jobTape) EnqueueDeliveries(_ context.Context, _ *sqldb.Tx, jobs []sqldb.DeliveryJob) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range deliveryParams("q", jobs) {
		j.jobs = append(j.jobs, p.Args.(DeliveryArgs))
	}
	return nil
}

func (j *jobTape) EnqueueVoids(context.Context, *sqldb.Tx, []parcela.CancelRequest) error { return nil }

// of returns the jobs queued for delivery id, oldest first.
func (j *jobTape) of(id string) []DeliveryArgs {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []DeliveryArgs
	for _, a := range j.jobs {
		if a.DeliveryID == id || slices.Contains(a.Batch, id) {
			out = append(out, a)
		}
	}
	return out
}

func newHookRig(t *testing.T, e sqldb.Dialect) *hookRig {
	t.Helper()
	clock := parcela.NewTestClock(time.Date(2026, 11, 21, 15, 30, 0, 0, parcela.SaoPaulo))
	tape := &jobTape{}
	db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock, Enqueuer: tape})
	r := &hookRig{t: t, db: db, app: sqldbtest.Services(db, clock), clock: clock, tape: tape,
		a: parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.received = append(r.received, req.Header.Clone())
		r.bodies = append(r.bodies, body)
		r.methods = append(r.methods, req.Method)
		n, answer := len(r.received), r.answer
		r.mu.Unlock()
		if answer != nil {
			answer(n, w)
		}
	}))
	t.Cleanup(r.srv.Close)
	policy, err := webhook.NewAddressPolicy("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	r.worker = &deliverWorker{deliveries: r.app.Deliveries, clock: clock, sender: webhook.NewSender(policy, 2*time.Second),
		metrics: newDeliveryMetrics(nil, r.app.Deliveries), shares: newCompanyShares(10, 100, false), slots: newEnvironmentSlots(100),
		startBudget: batchStartBudget}
	return r
}

// hook subscribes the receiver's path to the order's in_progress.
func (r *hookRig) hook(path, verb string) *parcela.Webhook {
	r.t.Helper()
	name, url, entity, events := "orders", r.srv.URL+path, "order", []string{"in_progress"}
	h, err := r.app.Webhooks.CreateWebhook(context.Background(), r.a, parcela.WebhookRequest{Name: &name, URL: &url, Entity: &entity, Events: &events, Verb: &verb})
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

// event writes an order's in_progress event and returns the delivery it
// made for h.
func (r *hookRig) event(h *parcela.Webhook) *parcela.Delivery {
	r.t.Helper()
	e := parcela.Event{ID: parcela.NewID(), CompanyID: r.a.CompanyID, Environment: r.a.Environment, Entity: "order", EntityID: parcela.NewID(),
		Event: "in_progress", Data: []byte(`{"status":"in_progress"}`), CreatedAt: r.clock.Now()}
	if err := r.db.WriteEvents(context.Background(), []parcela.Event{e}); err != nil {
		r.t.Fatal(err)
	}
	for _, d := range r.deliveries(h) {
		if d.EventID == e.ID {
			return d
		}
	}
	r.t.Fatalf("no delivery of event %s to webhook %s", e.ID, h.ID)
	return nil
}

func (r *hookRig) deliveries(h *parcela.Webhook) []*parcela.Delivery {
	r.t.Helper()
	ds, _, err := r.app.Webhooks.Deliveries(context.Background(), r.a, h.ID, parcela.Page{Page: 1, PerPage: 100})
	if err != nil {
		r.t.Fatal(err)
	}
	return ds
}

func (r *hookRig) delivery(id string) *parcela.Delivery {
	r.t.Helper()
	d, err := r.db.Delivery(context.Background(), r.a, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// work runs the delivery's last queued job once.
func (r *hookRig) work(id string) {
	r.t.Helper()
	jobs := r.tape.of(id)
	if len(jobs) == 0 {
		r.t.Fatalf("no job queued for delivery %s", id)
	}
	r.run(jobs[len(jobs)-1])
}

// run runs one job as River would.
func (r *hookRig) run(args DeliveryArgs) {
	r.t.Helper()
	if err := r.worker.Work(context.Background(), &river.Job[DeliveryArgs]{Args: args}); err != nil {
		r.t.Fatalf("job %+v: %v", args, err)
	}
}

func (r *hookRig) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.received)
}

func (r *hookRig) webhook(id string) *parcela.Webhook {
	r.t.Helper()
	h, err := r.app.Webhooks.Webhook(context.Background(), r.a, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

func failWith(status int) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) { w.WriteHeader(status) }
}

// A failing delivery is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
// and 10 h, each with at most 10% of jitter, then fails: eight attempts.
func TestDeliveryWalksTheRetrySchedule(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newHookRig(t, e)
			r.answer = failWith(500)
			// The most jitter allowed, so the upper bound is what is checked.
			r.worker.jitter = func(limit time.Duration) time.Duration { return limit }
			h := r.hook("/down", "post")
			d := r.event(h)
			want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
			for i, delay := range want {
				r.work(d.ID)
				got := r.delivery(d.ID)
				if got.Status != parcela.DeliveryRetrying || len(got.Attempts) != i+1 || got.NextAttemptAt == nil {
					t.Fatalf("after attempt %d: status %s, %d attempts, next %v", i+1, got.Status, len(got.Attempts), got.NextAttemptAt)
				}
				// The retry is due the delay plus its jitter after the attempt
				// began, plus the attempt's own length (well under a second
				// against a local receiver).
				wait := got.NextAttemptAt.Sub(got.Attempts[i].AttemptedAt)
				if lo, hi := delay+delay/10, delay+delay/10+time.Second; wait < lo || wait > hi {
					t.Fatalf("retry %d due %v after its attempt, want %v plus 10%%", i+1, wait, delay)
				}
			}
			r.work(d.ID)
			if got := r.delivery(d.ID); got.Status != parcela.DeliveryFailed || len(got.Attempts) != 8 || got.NextAttemptAt != nil {
				t.Fatalf("after the last attempt: status %s, %d attempts, next %v", got.Status, len(got.Attempts), got.NextAttemptAt)
			}
			if n := r.requests(); n != 8 {
				t.Fatalf("the receiver got %d requests, want 8", n)
			}
			// A settled delivery's stray job sends nothing.
			r.work(d.ID)
			if n := r.requests(); n != 8 {
				t.Fatalf("a failed delivery was sent again: %d requests", n)
			}
		})
	}
}

// A manual retry of a delivery that used up its attempts is sent again with
// the same webhook-id, and, when it fails, is retried on the schedule again,
// as the API documents ("automatic retries continue if it fails").
func TestManualRetryOfAFailedDeliveryIsRetried(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newHookRig(t, e)
			r.answer = failWith(500)
			h := r.hook("/down", "post")
			d := r.event(h)
			for range webhook.MaxAttempts {
				r.work(d.ID)
			}
			if got := r.delivery(d.ID); got.Status != parcela.DeliveryFailed {
				t.Fatalf("status %s after every attempt", got.Status)
			}
			if _, err := r.app.Webhooks.RetryDelivery(context.Background(), r.a, d.ID); err != nil {
				t.Fatal(err)
			}
			r.work(d.ID)
			got := r.delivery(d.ID)
			if got.Status != parcela.DeliveryRetrying || got.NextAttemptAt == nil || len(got.Attempts) != webhook.MaxAttempts+1 {
				t.Fatalf("a failed replay: status %s, next %v, %d attempts; want retrying", got.Status, got.NextAttemptAt, len(got.Attempts))
			}
			if wait := got.NextAttemptAt.Sub(got.Attempts[webhook.MaxAttempts].AttemptedAt); wait < 5*time.Second || wait > 6*time.Second {
				t.Fatalf("the replay's retry is due %v after it, want the schedule's first 5 s", wait)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, hd := range r.received {
				if hd.Get("webhook-id") != d.EventID {
					t.Fatalf("webhook-id %q, want the event id %q on every attempt", hd.Get("webhook-id"), d.EventID)
				}
			}
		})
	}
}

// Every attempt is signed over the exact bytes sent, with the event's id
// as webhook-id, by every secret current at the attempt: after a rotation,
// a retry of an event from before it verifies with the new secret and, for
// 24 hours, with the old one too.
func TestRetriesAreSignedWithTheSecretsOfTheirAttempt(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newHookRig(t, e)
			r.answer = failWith(503)
			h := r.hook("/hooks", "put")
			old := h.Secret
			d := r.event(h)
			r.work(d.ID)
			rotated, err := r.app.Webhooks.RotateWebhookSecret(ctx, r.a, h.ID)
			if err != nil {
				t.Fatal(err)
			}
			r.work(d.ID)
			r.clock.Advance(parcela.SecretOverlap)
			r.work(d.ID)
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.received) != 3 {
				t.Fatalf("%d requests, want 3", len(r.received))
			}
			verifies := func(i int, secret string) bool {
				return webhook.Verify(secret, r.received[i], r.bodies[i], time.Now(), webhook.DefaultTolerance) == nil
			}
			for i, want := range []struct{ old, new bool }{{true, false}, {true, true}, {false, true}} {
				if verifies(i, old) != want.old || verifies(i, rotated.Secret) != want.new {
					t.Errorf("attempt %d: verifies with the old secret %v, the new %v; want %v, %v", i+1,
						verifies(i, old), verifies(i, rotated.Secret), want.old, want.new)
				}
				if id := r.received[i].Get("webhook-id"); id != d.EventID {
					t.Errorf("attempt %d: webhook-id %q, want %q", i+1, id, d.EventID)
				}
				if r.methods[i] != http.MethodPut {
					t.Errorf("attempt %d: %s, want the webhook's verb PUT", i+1, r.methods[i])
				}
				if string(r.bodies[i]) != string(r.bodies[0]) {
					t.Errorf("attempt %d sent another body:\n%s\n%s", i+1, r.bodies[i], r.bodies[0])
				}
			}
		})
	}
}

// A webhook whose attempts have all failed for five days is disabled by
// the first failure at or past that mark, not before; a delivery in
// between starts the count again.
func TestWebhookDisabledAfterFiveDaysOfFailuresExactly(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newHookRig(t, e)
			fail := true
			r.answer = func(_ int, w http.ResponseWriter) {
				if fail {
					w.WriteHeader(500)
				}
			}
			h := r.hook("/hooks", "post")
			t0 := r.clock.Now()
			r.work(r.event(h).ID)
			r.clock.Set(t0.Add(parcela.FailingLimit - time.Millisecond))
			r.work(r.event(h).ID)
			if !r.webhook(h.ID).Enabled {
				t.Fatal("disabled before five days of failures")
			}
			r.clock.Set(t0.Add(parcela.FailingLimit))
			pending := r.event(h)
			r.work(r.event(h).ID)
			got := r.webhook(h.ID)
			if got.Enabled || got.DisabledReason == nil {
				t.Fatalf("still enabled after five days of failures: %+v", got)
			}
			// A disabled webhook gets no delivery of a new event, and a
			// delivery already queued is not sent.
			e := parcela.Event{ID: parcela.NewID(), CompanyID: r.a.CompanyID, Environment: r.a.Environment, Entity: "order", EntityID: parcela.NewID(),
				Event: "in_progress", Data: []byte(`{}`), CreatedAt: r.clock.Now()}
			if err := r.db.WriteEvents(context.Background(), []parcela.Event{e}); err != nil {
				t.Fatal(err)
			}
			for _, d := range r.deliveries(h) {
				if d.EventID == e.ID {
					t.Fatal("a disabled webhook got a delivery")
				}
			}
			sent := r.requests()
			r.work(pending.ID)
			if r.requests() != sent {
				t.Fatal("a disabled webhook's queued delivery was sent")
			}
			if d := r.delivery(pending.ID); d.Status != parcela.DeliveryFailed {
				t.Fatalf("a disabled webhook's queued delivery is %s", d.Status)
			}

			// Enabled again, it starts from nothing: a success clears the count.
			enabled := true
			if _, err := r.app.Webhooks.UpdateWebhook(context.Background(), r.a, h.ID, parcela.WebhookRequest{Enabled: &enabled}); err != nil {
				t.Fatal(err)
			}
			t1 := r.clock.Now()
			r.work(r.event(h).ID)
			fail = false
			r.clock.Set(t1.Add(time.Hour))
			r.work(r.event(h).ID)
			fail = true
			r.clock.Set(t1.Add(parcela.FailingLimit + time.Hour))
			r.work(r.event(h).ID)
			if !r.webhook(h.ID).Enabled {
				t.Fatal("disabled although a delivery succeeded within the five days")
			}
		})
	}
}

// Retry-After on 429 and 503 puts the next attempt off by at least that
// long (at most a day); a shorter one, or one on another status, leaves
// the schedule's delay. A 3xx is a failure, not followed. A 410 fails the
// delivery at once and disables the webhook, whose other queued
// deliveries are then not sent.
func TestDeliveryAnswers(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newHookRig(t, e)
			h := r.hook("/hooks", "patch")
			for _, c := range []struct {
				status     int
				retryAfter string // "in 2h": the HTTP-date two hours after the answer
				wait       time.Duration
			}{
				{429, "3600", time.Hour},
				{503, "in 2h", 2 * time.Hour},
				{503, "1", 5 * time.Second},
				{503, "-30", 5 * time.Second},
				{503, "Sun, 01 Mar 2026 11:00:00 GMT", 5 * time.Second},
				{429, "99999999999", 24 * time.Hour},
				{500, "3600", 5 * time.Second},
				{302, "3600", 5 * time.Second},
			} {
				r.answer = func(_ int, w http.ResponseWriter) {
					v := c.retryAfter
					if v == "in 2h" {
						// Dated when answered: a date taken before the earlier
						// cases ran was already seconds short of two hours on a
						// loaded machine. Half a second more centres its
						// truncation to the second on two hours.
						v = time.Now().Add(2*time.Hour + 500*time.Millisecond).UTC().Format(http.TimeFormat)
					}
					w.Header().Set("Retry-After", v)
					w.Header().Set("Location", "/elsewhere")
					w.WriteHeader(c.status)
				}
				d := r.event(h)
				r.work(d.ID)
				got := r.delivery(d.ID)
				if got.Status != parcela.DeliveryRetrying || got.NextAttemptAt == nil {
					t.Fatalf("%d Retry-After %q: status %s", c.status, c.retryAfter, got.Status)
				}
				// Within the attempt's length (and an HTTP-date's second).
				if wait := got.NextAttemptAt.Sub(got.Attempts[0].AttemptedAt); wait < c.wait-time.Second || wait > c.wait+time.Second {
					t.Errorf("%d Retry-After %q: next attempt %v later, want %v", c.status, c.retryAfter, wait, c.wait)
				}
			}
			r.mu.Lock()
			for i, m := range r.methods {
				if m != http.MethodPatch {
					t.Errorf("request %d: %s, want the webhook's verb PATCH", i+1, m)
				}
			}
			r.mu.Unlock()

			queued := r.event(h)
			r.answer = failWith(http.StatusGone)
			gone := r.event(h)
			r.work(gone.ID)
			if d := r.delivery(gone.ID); d.Status != parcela.DeliveryFailed || d.NextAttemptAt != nil {
				t.Fatalf("after 410 the delivery is %s, next %v", d.Status, d.NextAttemptAt)
			}
			if w := r.webhook(h.ID); w.Enabled || w.DisabledReason == nil {
				t.Fatalf("after 410 the webhook is %+v", w)
			}
			sent := r.requests()
			r.work(queued.ID)
			if r.requests() != sent {
				t.Fatal("a webhook disabled by 410 was sent a queued delivery")
			}
		})
	}
}

// A delivery job that runs again after its attempt was recorded (River
// retries a job whose record answered an error though it committed; the
// rescuer frees a job it took for dead) sends nothing more and queues no
// second retry: the schedule goes on as one chain, and a delivery is not
// sent twice for one step of it.
func TestDeliveryJobRunAgainStandsDown(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newHookRig(t, e)
			r.answer = failWith(500)
			h := r.hook("/down", "post")
			d := r.event(h)
			first := r.tape.of(d.ID)
			if len(first) != 1 {
				t.Fatalf("%d jobs queued for a new delivery", len(first))
			}
			r.run(first[0])
			r.run(first[0])
			retries := r.tape.of(d.ID)[1:]
			if n := r.requests(); n != 1 || len(retries) != 1 {
				t.Fatalf("the first attempt's job run twice sent %d requests and queued %d retries; want 1 and 1", n, len(retries))
			}
			r.run(retries[0])
			r.run(retries[0])
			if n, queued := r.requests(), len(r.tape.of(d.ID)); n != 2 || queued != 3 {
				t.Fatalf("a retry's job run twice: %d requests, %d jobs queued; want 2 and 3", n, queued)
			}
			if got := r.delivery(d.ID); got.Status != parcela.DeliveryRetrying || len(got.Attempts) != 2 {
				t.Fatalf("status %s with %d attempts, want retrying with 2", got.Status, len(got.Attempts))
			}
			// So is a manual retry's job.
			if _, err := r.app.Webhooks.RetryDelivery(context.Background(), r.a, d.ID); err != nil {
				t.Fatal(err)
			}
			manual := r.tape.of(d.ID)[3]
			r.run(manual)
			r.run(manual)
			if n := r.requests(); n != 3 {
				t.Fatalf("a manual retry's job run twice: %d requests, want 3", n)
			}
		})
	}
}

// Two runs of one delivery job at once (the rescuer freed a job still
// running: its record was slow) both read the delivery before either
// recorded, and both send. The attempt is recorded once, by whichever
// run records first: the other's record of the same attempt changes
// nothing, so a delivery recorded delivered is not moved back to retrying
// and sent again by the other run's failure.
func TestDeliveryJobRunTwiceAtOnceRecordsOneAttempt(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newHookRig(t, e)
			r.answer = func(n int, w http.ResponseWriter) {
				if n > 1 {
					w.WriteHeader(http.StatusInternalServerError)
				}
			}
			h := r.hook("/twice", "post")
			d := r.event(h)
			job := r.tape.of(d.ID)[0]
			ctx := context.Background()
			// Both runs read the delivery, then send, before either records.
			var records []func() error
			for range 2 {
				work, err := r.app.Deliveries.DeliveryWork(ctx, d.ID)
				if err != nil {
					t.Fatal(err)
				}
				if _, record := r.worker.attempt(ctx, job.items()[0], work); record != nil {
					records = append(records, record)
				}
			}
			if len(records) != 2 || r.requests() != 2 {
				t.Fatalf("%d records of %d requests; want both runs to send", len(records), r.requests())
			}
			for _, record := range records {
				if err := record(); err != nil {
					t.Fatal(err)
				}
			}
			got := r.delivery(d.ID)
			if got.Status != parcela.DeliveryDelivered || got.AttemptCount != 1 || len(got.Attempts) != 1 {
				t.Fatalf("status %s with %d attempts (%d listed), want delivered with the one that delivered", got.Status, got.AttemptCount, len(got.Attempts))
			}
			if queued := r.tape.of(d.ID); len(queued) != 1 {
				t.Fatalf("%d jobs queued, want no retry of a delivered delivery", len(queued))
			}
		})
	}
}

// A delivery whose receiver got the event but whose attempt was never
// recorded (the process died between the answer and the record) is sent
// again when its job runs again, with the same message id and body, so a
// receiver that keys on the id sees one event; the delivery then ends
// delivered with the one attempt recorded, and no retry is queued.
func TestDeliveryReceivedButNotRecordedIsSentAgainAsTheSameMessage(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newHookRig(t, e)
			h := r.hook("/died", "post")
			d := r.event(h)
			job := r.tape.of(d.ID)[0]
			work, err := r.app.Deliveries.DeliveryWork(context.Background(), d.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, record := r.worker.attempt(context.Background(), job.items()[0], work); record == nil || r.requests() != 1 {
				t.Fatalf("the first run sent %d requests", r.requests())
			}
			// The process died here: the record never ran.
			if got := r.delivery(d.ID); got.Status == parcela.DeliveryDelivered || got.AttemptCount != 0 {
				t.Fatalf("an attempt never recorded shows as %s with %d attempts", got.Status, got.AttemptCount)
			}
			r.run(job)
			r.mu.Lock()
			received, bodies := slices.Clone(r.received), slices.Clone(r.bodies)
			r.mu.Unlock()
			if len(received) != 2 || received[0].Get("webhook-id") == "" || received[0].Get("webhook-id") != received[1].Get("webhook-id") ||
				!bytes.Equal(bodies[0], bodies[1]) {
				t.Fatalf("%d requests, ids %q and %q; want the same message twice", len(received), received[0].Get("webhook-id"), received[len(received)-1].Get("webhook-id"))
			}
			if got := r.delivery(d.ID); got.Status != parcela.DeliveryDelivered || got.AttemptCount != 1 || len(r.tape.of(d.ID)) != 1 {
				t.Fatalf("status %s with %d attempts, %d jobs queued; want delivered with 1 and no retry", got.Status, got.AttemptCount, len(r.tape.of(d.ID)))
			}
		})
	}
}

// An attempt cut short by parcela stopping (its job's context canceled
// before any answer came) is not the receiver's failure: it is retried
// even when it was the schedule's last, as its recorded error says. It
// marked the delivery failed after the eighth attempt, with an error
// saying "the delivery is retried", and the event was never sent again.
func TestAttemptCanceledByAStopIsRetried(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newHookRig(t, e)
			id := r.cutShortByAStop(t, webhook.MaxAttempts-1)
			got := r.delivery(id)
			last := got.Attempts[len(got.Attempts)-1]
			if len(got.Attempts) != webhook.MaxAttempts || last.Error == nil || !strings.Contains(*last.Error, "canceled") {
				t.Fatalf("%d attempts, the last %+v; want the canceled one recorded", len(got.Attempts), last)
			}
			if got.Status != parcela.DeliveryRetrying || got.NextAttemptAt == nil {
				t.Fatalf("after an attempt parcela's stop canceled: status %s, next %v; want retrying", got.Status, got.NextAttemptAt)
			}
			// The retry goes out, and its answer counts as the schedule's last.
			r.mu.Lock()
			r.answer = failWith(500)
			r.mu.Unlock()
			r.work(id)
			if got := r.delivery(id); got.Status != parcela.DeliveryFailed || len(got.Attempts) != webhook.MaxAttempts+1 {
				t.Fatalf("after the retry: status %s, %d attempts; want failed", got.Status, len(got.Attempts))
			}
		})
	}
}
