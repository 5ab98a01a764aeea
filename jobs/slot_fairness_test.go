package jobs

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb/sqldbtest"
)

// A fast company's attempts that wait for one of its places hold no
// attempt slot while they wait: with its burst running and as many more
// waiting for a place, it held every slot of its environment, and another
// company's attempt waited behind its waiters (deferred, if they kept
// coming), where the burst is to leave the others half the workers.
func TestFastCompanysWaitersHoldNoSlot(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			r := newHookRig(t, e)
			// Four workers: a share of one place, a burst of two.
			r.worker.shares = newCompanyShares(1, 4, false)
			r.worker.slots = newEnvironmentSlots(4)

			// Company A's receiver holds every request until the test ends.
			release := make(chan struct{})
			var mu sync.Mutex
			held := 0
			slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				mu.Lock()
				held++
				mu.Unlock()
				<-release
				w.WriteHeader(204)
			}))
			t.Cleanup(slow.Close)
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) })

			ctx := context.Background()
			a := r.a
			name, entity, events, verb := "orders", "order", []string{"in_progress"}, "post"
			url := slow.URL + "/a"
			ha, err := r.app.Webhooks.CreateWebhook(ctx, a, parcela.WebhookRequest{Name: &name, URL: &url, Entity: &entity, Events: &events, Verb: &verb})
			if err != nil {
				t.Fatal(err)
			}
			hb := func() *parcela.Webhook {
				r.a = parcela.Auth{CompanyID: sqldbtest.Company(t, r.db).ID, Environment: parcela.Sandbox}
				return r.hook("/b", "post")
			}()
			b := r.a
			dB := r.event(hb)
			r.a = a
			work := func(id string) *parcela.DeliveryWork {
				t.Helper()
				wk, err := r.app.Deliveries.DeliveryWork(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return wk
			}

			// A's burst: two attempts running, held by its receiver.
			var running sync.WaitGroup
			for range 2 {
				wk := work(r.event(ha).ID)
				running.Go(func() {
					if _, record := r.worker.attempt(ctx, deliveryItem{id: wk.Delivery.ID, attempt: 1}, wk); record != nil {
						_ = record()
					}
				})
			}
			for deadline := time.Now().Add(30 * time.Second); ; {
				mu.Lock()
				n := held
				mu.Unlock()
				if n == 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("A's receiver holds %d requests, want 2", n)
				}
				time.Sleep(time.Millisecond)
			}

			// Two more of A's attempts wait for a place (A is fast: its
			// attempts began just now). While they wait, A holds only the
			// slots of its running attempts.
			key := a.CompanyID + "/" + string(parcela.Sandbox)
			waiting := func() int {
				r.worker.shares.mu.Lock()
				defer r.worker.shares.mu.Unlock()
				if s := r.worker.shares.byKey[key]; s != nil {
					return s.waiting
				}
				return 0
			}
			// Each try's attempts are read before: A's running attempts are
			// dated now (as if just begun), so A is fast while they wait,
			// however slow the machine.
			const tries = 20
			var over []*parcela.DeliveryWork
			for range 2 * tries {
				over = append(over, work(r.event(ha).ID))
			}
			freshen := func() {
				r.worker.shares.mu.Lock()
				defer r.worker.shares.mu.Unlock()
				if s := r.worker.shares.byKey[key]; s != nil {
					for i := range s.started {
						s.started[i] = time.Now()
					}
				}
			}
			seen := false
			for try := 0; try < tries && !seen; try++ {
				var waiters sync.WaitGroup
				freshen()
				for _, wk := range over[2*try : 2*try+2] {
					waiters.Go(func() {
						if snooze, record := r.worker.attempt(ctx, deliveryItem{id: wk.Delivery.ID, attempt: 1}, wk); record != nil {
							t.Error("an attempt over A's burst was sent")
							_ = record()
						} else if snooze == 0 {
							t.Error("an attempt over A's burst was neither sent nor deferred")
						}
					})
				}
				for end := time.Now().Add(time.Second); time.Now().Before(end); {
					if waiting() == 2 {
						if taken := len(r.worker.slots.of(parcela.Sandbox)); taken != 2 {
							t.Fatalf("with 2 attempts running and 2 waiting for a place, %d of 4 slots taken, want 2", taken)
						}
						seen = true
						break
					}
					time.Sleep(100 * time.Microsecond)
				}
				waiters.Wait()
			}
			if !seen {
				t.Fatal("A's attempts over its burst never waited for a place")
			}

			// Another company's attempt is sent while A's are still held.
			wkB := work(dB.ID)
			if _, record := r.worker.attempt(ctx, deliveryItem{id: dB.ID, attempt: 1}, wkB); record == nil {
				t.Fatal("B's attempt was deferred behind A's")
			} else if err := record(); err != nil {
				t.Fatal(err)
			}
			r.a = b
			if d := r.delivery(dB.ID); d.Status != parcela.DeliveryDelivered {
				t.Fatalf("B's delivery is %s, want delivered", d.Status)
			}
			once.Do(func() { close(release) })
			running.Wait()
		})
	}
}

// A place taken before a wait for an attempt slot counts its attempt's age
// from when the attempt began: a wait behind the other companies' attempts
// is not the company's receiver being slow, and would hold it to its share.
func TestCompanySharesAttemptAgeFromItsStart(t *testing.T) {
	t.Parallel()
	c := newCompanyShares(1, 4, false) // share 1, burst 2
	tookAt := time.Now().Add(-time.Second)
	if ok, _ := c.acquire("a/sandbox", tookAt); !ok {
		t.Fatal("refused within the share")
	}
	if ok, _ := c.acquire("a/sandbox", time.Now()); ok {
		t.Fatal("a company whose attempt has run a second burst past its share")
	}
	began := c.restart("a/sandbox", tookAt)
	if ok, _ := c.acquire("a/sandbox", began); !ok {
		t.Fatal("a company whose attempt has just begun was held to its share")
	}
}

// A company's backlog to a webhook deleted or disabled while it was queued
// is closed without a request, without waiting for an attempt slot or the
// company's place (here every slot is taken), each delivery failed with
// the reason; another company's delivery then goes out as usual.
func TestBacklogOfADeletedOrDisabledWebhookTakesNoSlot(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			r := newHookRig(t, e)
			r.worker.shares = newCompanyShares(1, 2, false)
			r.worker.slots = newEnvironmentSlots(1)
			ctx := context.Background()
			a := r.a
			deleted, disabled := r.hook("/deleted", "post"), r.hook("/disabled", "post")
			var backlog []*parcela.Delivery
			for range 3 {
				d := r.event(deleted)
				backlog = append(backlog, d)
				for _, o := range r.deliveries(disabled) {
					if o.EventID == d.EventID {
						backlog = append(backlog, o)
					}
				}
			}
			if len(backlog) != 6 {
				t.Fatalf("%d deliveries queued, want 6", len(backlog))
			}
			if err := r.app.Webhooks.DeleteWebhook(ctx, a, deleted.ID); err != nil {
				t.Fatal(err)
			}
			off := false
			if _, err := r.app.Webhooks.UpdateWebhook(ctx, a, disabled.ID, parcela.WebhookRequest{Enabled: &off}); err != nil {
				t.Fatal(err)
			}

			slots := r.worker.slots.of(parcela.Sandbox)
			if !slots.take(ctx) {
				t.Fatal("the only slot was not free")
			}
			for _, d := range backlog {
				r.work(d.ID)
			}
			if len(slots) != 1 {
				t.Fatalf("%d slots taken after the skipped backlog, want the test's 1", len(slots))
			}
			for _, d := range backlog {
				got := r.delivery(d.ID)
				want := "not sent: the webhook is disabled"
				if d.WebhookID == deleted.ID {
					want = "not sent: the webhook was deleted"
				}
				if got.Status != parcela.DeliveryFailed || got.AttemptCount != 1 || len(got.Attempts) != 1 ||
					got.Attempts[0].Error == nil || *got.Attempts[0].Error != want {
					t.Errorf("delivery to %s: %s after %d attempts (%+v), want failed: %q", d.WebhookID, got.Status, got.AttemptCount, got.Attempts, want)
				}
			}
			if n := r.requests(); n != 0 {
				t.Fatalf("the receiver got %d requests of the closed webhooks", n)
			}
			slots.give()

			r.a = parcela.Auth{CompanyID: sqldbtest.Company(t, r.db).ID, Environment: parcela.Sandbox}
			other := r.event(r.hook("/other", "post"))
			r.work(other.ID)
			if got := r.delivery(other.ID); got.Status != parcela.DeliveryDelivered || r.requests() != 1 {
				t.Fatalf("the other company's delivery is %s after %d requests, want delivered after 1", got.Status, r.requests())
			}
		})
	}
}
