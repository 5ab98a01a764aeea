package jobs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"parcela"
	"parcela/sqldb"
	"parcela/webhook"
)

// The first attempts due now go out in batches of up to maxBatch; retries
// and manual retries keep a job each, at their own time and generation.
func TestDeliveryParamsBatchFirstAttempts(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var jobs []sqldb.DeliveryJob
	for i := range maxBatch + 2 {
		jobs = append(jobs, sqldb.DeliveryJob{DeliveryID: "d" + string(rune('A'+i%26)) + string(rune('a'+i/26))})
	}
	jobs = append(jobs, sqldb.DeliveryJob{DeliveryID: "retry", Generation: 0, Attempt: 3, At: &at}, sqldb.DeliveryJob{DeliveryID: "manual", Generation: 2, Attempt: 1})
	params := deliveryParams("q", jobs)
	if len(params) != 4 {
		t.Fatalf("%d jobs, want 4 (a full batch, a batch of 2, a retry, a manual retry)", len(params))
	}
	// The full batch goes as it fills, the rest at the end.
	first, second := params[0].Args.(DeliveryArgs), params[3].Args.(DeliveryArgs)
	if len(first.Batch) != maxBatch || len(second.Batch) != 2 || first.DeliveryID != "" || second.Batch[1] != jobs[maxBatch+1].DeliveryID {
		t.Fatalf("batches %v, %v", first, second)
	}
	if r := params[1]; !reflect.DeepEqual(r.Args, DeliveryArgs{DeliveryID: "retry", Attempt: 3}) || !r.InsertOpts.ScheduledAt.Equal(at) {
		t.Fatalf("retry %+v %+v", r.Args, r.InsertOpts)
	}
	if m := params[2].Args.(DeliveryArgs); m.DeliveryID != "manual" || m.Generation != 2 || m.Attempt != 1 || m.Batch != nil {
		t.Fatalf("manual retry %+v", m)
	}
	for _, p := range params {
		if p.InsertOpts.Queue != "q" {
			t.Fatalf("queue %q", p.InsertOpts.Queue)
		}
	}
	// A lone first attempt is an ordinary job, of the delivery's first attempt.
	if p := deliveryParams("q", []sqldb.DeliveryJob{{DeliveryID: "one", Attempt: 1}}); len(p) != 1 || !reflect.DeepEqual(p[0].Args, DeliveryArgs{DeliveryID: "one", Attempt: 1}) {
		t.Fatalf("%+v", p)
	}
}

// fakeDeliveries is a delivery store in memory: a recorded attempt moves
// its delivery on, as the store's does.
type fakeDeliveries struct {
	mu       sync.Mutex
	works    map[string]*parcela.DeliveryWork
	recorded []string
}

func (f *fakeDeliveries) copyOf(id string) *parcela.DeliveryWork {
	w, ok := f.works[id]
	if !ok {
		return nil
	}
	c := *w
	return &c
}

func (f *fakeDeliveries) DeliveryWork(_ context.Context, id string) (*parcela.DeliveryWork, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if w := f.copyOf(id); w != nil {
		return w, nil
	}
	return nil, errors.New("not found")
}

func (f *fakeDeliveries) DeliveryWorks(_ context.Context, ids []string) ([]*parcela.DeliveryWork, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*parcela.DeliveryWork
	for _, id := range ids {
		if w := f.copyOf(id); w != nil {
			out = append(out, w)
		}
	}
	return out, nil
}

func (f *fakeDeliveries) RecordAttempt(_ context.Context, w *parcela.DeliveryWork, r parcela.AttemptResult) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := &f.works[w.Delivery.ID].Delivery
	d.AttemptCount++
	d.Status = parcela.DeliveryRetrying
	if r.Delivered {
		d.Status = parcela.DeliveryDelivered
	}
	f.recorded = append(f.recorded, w.Delivery.ID)
	return nil
}

func (f *fakeDeliveries) PendingDeliveries(context.Context) (int, error) { return 0, nil }

func (f *fakeDeliveries) takeRecorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.recorded
	f.recorded = nil
	slices.Sort(r)
	return r
}

// A batch job sends each of its deliveries still waiting for a first
// attempt and records it; it skips those superseded, settled or already
// attempted (by an earlier run of the job). A delivery whose company is
// over its share snoozes the job, whose next run sends only that one.
func TestBatchJobAttemptsEachDeliveryOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]int{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.Header.Get("webhook-id")]++
		mu.Unlock()
		w.WriteHeader(204)
	}))
	t.Cleanup(rc.Close)
	policy, err := webhook.NewAddressPolicy("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	hook := &parcela.Webhook{ID: "wh", URL: rc.URL, Verb: "post", Secret: secret, Enabled: true}
	work := func(id, company string, status string, attempts, generation int) *parcela.DeliveryWork {
		return &parcela.DeliveryWork{
			Delivery: parcela.Delivery{ID: id, CompanyID: company, Environment: "sandbox", Status: status, AttemptCount: attempts, Generation: generation},
			Webhook:  hook, Event: parcela.Event{ID: "ev-" + id, Entity: "order", Event: "in_progress", Data: []byte(`{}`)},
		}
	}
	f := &fakeDeliveries{works: map[string]*parcela.DeliveryWork{
		"a":          work("a", "c1", parcela.DeliveryPending, 0, 0),
		"b":          work("b", "c1", parcela.DeliveryPending, 0, 0),
		"slow":       work("slow", "c2", parcela.DeliveryPending, 0, 0),
		"attempted":  work("attempted", "c1", parcela.DeliveryRetrying, 1, 0),
		"delivered":  work("delivered", "c1", parcela.DeliveryDelivered, 1, 0),
		"superseded": work("superseded", "c1", parcela.DeliveryPending, 0, 1),
	}}
	w := &deliverWorker{deliveries: f, clock: parcela.SystemClock{}, sender: webhook.NewSender(policy, time.Second),
		metrics: newDeliveryMetrics(nil, f), shares: newCompanyShares(2, 4, false), slots: newEnvironmentSlots(4)}
	job := &river.Job[DeliveryArgs]{Args: DeliveryArgs{Batch: []string{"a", "b", "slow", "attempted", "delivered", "superseded"}}}
	// Past its start budget a job begins no attempt: it snoozes, and its
	// next run makes them.
	var snooze *river.JobSnoozeError
	if err := w.Work(context.Background(), job); !errors.As(err, &snooze) {
		t.Fatalf("run past its budget: %v, want a snooze", err)
	}
	if r := f.takeRecorded(); len(r) != 0 {
		t.Fatalf("a run past its budget recorded %v", r)
	}
	w.startBudget = time.Minute
	// c2 holds both its places with attempts begun long ago: it is slow,
	// so its next attempt is deferred rather than kept waiting. c1's two
	// attempts have a place each.
	began := time.Now().Add(-time.Minute)
	for range 2 {
		if ok, _, _ := w.shares.take("c2/sandbox", began, false); !ok {
			t.Fatal("c2 took no place")
		}
	}
	if err := w.Work(context.Background(), job); !errors.As(err, &snooze) {
		t.Fatalf("first run: %v, want a snooze for c2's deferred delivery", err)
	}
	if r := f.takeRecorded(); !slices.Equal(r, []string{"a", "b"}) {
		t.Fatalf("first run recorded %v, want [a b]", r)
	}
	w.shares.release("c2/sandbox", began, time.Millisecond)
	w.shares.release("c2/sandbox", began, time.Millisecond)
	if err := w.Work(context.Background(), job); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if r := f.takeRecorded(); !slices.Equal(r, []string{"slow"}) {
		t.Fatalf("second run recorded %v, want [slow]", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := map[string]int{"ev-a": 1, "ev-b": 1, "ev-slow": 1}; !maps.Equal(got, want) {
		t.Fatalf("receiver got %v, want %v", got, want)
	}
}

// A batch job whose context is canceled (parcela stopping) begins no more
// attempts: those it had not sent wait for its next run. Each of them was
// sent with the canceled context, failed at once, and was recorded as an
// attempt "canceled while waiting for the answer" of a request never
// made, using up a step of its schedule and marking its webhook failing.
func TestCanceledBatchJobRecordsOnlyTheAttemptsItMade(t *testing.T) {
	t.Parallel()
	var sent atomic.Int32
	release := make(chan struct{})
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		<-release // answers nothing before the job is canceled
	}))
	t.Cleanup(rc.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handlers return before the server closes
	policy, err := webhook.NewAddressPolicy("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	hook := &parcela.Webhook{ID: "wh", URL: rc.URL, Verb: "post", Secret: secret, Enabled: true}
	f := &fakeDeliveries{works: map[string]*parcela.DeliveryWork{}}
	var ids []string
	for i := range 3 * batchParallelism {
		id := fmt.Sprintf("d%d", i)
		ids = append(ids, id)
		f.works[id] = &parcela.DeliveryWork{
			Delivery: parcela.Delivery{ID: id, CompanyID: "c1", Environment: "sandbox", Status: parcela.DeliveryPending},
			Webhook:  hook, Event: parcela.Event{ID: "ev-" + id, Entity: "order", Event: "in_progress", Data: []byte(`{}`)},
		}
	}
	w := &deliverWorker{deliveries: f, clock: parcela.SystemClock{}, sender: webhook.NewSender(policy, 5*time.Second),
		metrics: newDeliveryMetrics(nil, f), shares: newCompanyShares(100, 100, false), slots: newEnvironmentSlots(100), startBudget: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for sent.Load() < batchParallelism {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	var snooze *river.JobSnoozeError
	if err := w.Work(ctx, &river.Job[DeliveryArgs]{Args: DeliveryArgs{Batch: ids}}); !errors.As(err, &snooze) {
		t.Fatalf("canceled run: %v, want a snooze for the deliveries it did not send", err)
	}
	if r, n := f.takeRecorded(), int(sent.Load()); len(r) != n || n != batchParallelism {
		t.Fatalf("the receiver got %d requests, and %d attempts were recorded: %v", n, len(r), r)
	}
}
