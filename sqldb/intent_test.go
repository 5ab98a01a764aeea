package sqldb_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb/sqldbtest"
)

// errProvider is a provider's failure (a refusal, a timeout).
var errProvider = errors.New("the provider timed out")

// crash is the panic a hook raises to stop the process at its point.
type crash struct{}

// survive runs fn and reports whether it crashed (panicked with crash).
func survive(t *testing.T, fn func()) (crashed bool) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(crash); !ok {
				panic(v)
			}
			crashed = true
		}
	}()
	fn()
	return false
}

// crashPoint stops an issue at one step; each installs its hooks on a rig.
type crashPoint struct {
	name string
	set  func(r *lifecycleRig)
	// stored tells whether the change that stores the payment committed.
	stored bool
}

var crashPoints = []crashPoint{
	{"after the intent, before the provider", func(r *lifecycleRig) {
		r.ledger.set(func(parcela.IssueRequest) error { panic(crash{}) }, nil, nil)
	}, false},
	{"after the provider issued, before the change", func(r *lifecycleRig) {
		r.ledger.set(nil, func(parcela.IssueRequest) error { panic(crash{}) }, nil)
	}, false},
	{"after the change committed", func(r *lifecycleRig) {
		r.store.crashAfterApply(func(c *parcela.Change) {
			if len(c.NewPayments) > 0 {
				panic(crash{})
			}
		})
	}, true},
	{"voiding a failed call, before the provider canceled", func(r *lifecycleRig) {
		r.ledger.set(nil, func(parcela.IssueRequest) error { return errProvider }, func(parcela.CancelRequest) error { panic(crash{}) })
	}, false},
	{"voiding a failed call, after the provider canceled", func(r *lifecycleRig) {
		r.ledger.set(nil, func(parcela.IssueRequest) error { return errProvider }, nil)
		r.ledger.afterCancel(func(parcela.CancelRequest) { panic(crash{}) })
	}, false},
}

func (r *lifecycleRig) clearHooks() {
	r.ledger.set(nil, nil, nil)
	r.store.crashAfterApply(nil)
}

// recoverIntents runs the recovery sweep past the intents' timeout.
func (r *lifecycleRig) recoverIntents(a parcela.Auth) parcela.SweepReport {
	r.t.Helper()
	r.clock.Advance(parcela.IntentTimeout + time.Second)
	rep, err := r.app.Sweeps.Only(a.CompanyID).RecoverIntents(r.ctx)
	if err != nil || len(rep.Failed) != 0 {
		r.t.Fatalf("recover intents: %+v %v", rep, err)
	}
	return rep
}

// eachCrashPoint runs fn on each engine at each crash point, in parallel,
// each with a rig of its own and a company of its own.
func eachCrashPoint(t *testing.T, fn func(t *testing.T, r *lifecycleRig, a parcela.Auth, cp crashPoint)) {
	t.Helper()
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		for _, cp := range crashPoints {
			t.Run(string(e)+"/"+cp.name, func(t *testing.T) {
				t.Parallel()
				r := newRig(t, e)
				fn(t, r, r.company("Escola "+sqldbtest.Suffix()), cp)
			})
		}
	}
}

// A crash at any step of a charge leaves neither a lost nor a duplicated
// payment: the recovery sweep voids what was issued and not stored, and
// the charge, run again, issues exactly one.
func TestChargeCrashAtEveryStep(t *testing.T) {
	eachCrashPoint(t, func(t *testing.T, r *lifecycleRig, a parcela.Auth, cp crashPoint) {
		offer, o := r.pendingOrder(a)
		cp.set(r)
		if !survive(t, func() { _, _ = r.charge(a, offer, o, parcela.MethodPix, 3) }) {
			t.Fatal("the charge did not reach the crash")
		}
		r.clearHooks()
		// The intent of a payment not stored is voided; a stored one has none.
		if rep := r.recoverIntents(a); (rep.Moved == 1) == cp.stored {
			t.Fatalf("voided %d intents", rep.Moved)
		}
		r.ledger.balanced(t, r.db, a)

		_, err := r.charge(a, offer, o, parcela.MethodPix, 3)
		if cp.stored {
			if parcela.ErrorCode(err) != parcela.EINVALIDSTATE {
				t.Fatalf("charging a charged order: %v", err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		got, err := r.db.Order(r.ctx, a, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		byBill := r.ledger.balanced(t, r.db, a)
		if len(got.Billings) != 1 || len(byBill[got.Billings[0].Bills[0].ID]) != 1 || got.Status != parcela.OrderInProgress {
			t.Fatalf("order %s with %d billings, first bill's live payments %v", got.Status, len(got.Billings), byBill)
		}
	})
}

// The same for the boleto the installment sweep issues.
func TestInstallmentIssueCrashAtEveryStep(t *testing.T) {
	eachCrashPoint(t, func(t *testing.T, r *lifecycleRig, a parcela.Auth, cp crashPoint) {
		billing := r.activeBilling(a, 2)
		bill := billing.Bills[1]
		r.at(bill.DueDate.AddDate(0, 0, -5))
		sweeps := r.app.Sweeps.Only(a.CompanyID)
		cp.set(r)
		crashed := survive(t, func() {
			rep, err := sweeps.IssueDueInstallments(r.ctx)
			// A failed call (no crash yet) is the sweep's failure to report.
			if err != nil || rep.Moved+len(rep.Failed) != 1 {
				t.Errorf("sweep %+v %v", rep, err)
			}
		})
		if !crashed {
			t.Fatal("the sweep did not reach the crash")
		}
		r.clearHooks()
		r.recoverIntents(a)
		r.ledger.balanced(t, r.db, a)
		// Past any backoff, the sweep issues what is still missing.
		r.clock.Advance(time.Hour)
		if rep, err := sweeps.IssueDueInstallments(r.ctx); err != nil || len(rep.Failed) != 0 || (rep.Moved == 1) == cp.stored {
			t.Fatalf("issue after the crash: %+v %v", rep, err)
		}
		if byBill := r.ledger.balanced(t, r.db, a); len(byBill[bill.ID]) != 1 {
			t.Fatalf("installment's live payments %v", byBill[bill.ID])
		}
	})
}

// A provider that fails (before or after it acted) fails the charge with
// 503 unavailable and leaves nothing issued: the order stays pending.
func TestChargeWithAFailingProvider(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			a := r.company("Escola " + sqldbtest.Suffix())
			fail := func(parcela.IssueRequest) error { return errProvider }
			for _, hooks := range [][2]func(parcela.IssueRequest) error{{fail, nil}, {nil, fail}} {
				offer, o := r.pendingOrder(a)
				r.ledger.set(hooks[0], hooks[1], nil)
				_, err := r.charge(a, offer, o, parcela.MethodBoleto, 3)
				if parcela.ErrorCode(err) != parcela.EUNAVAILABLE || !errors.Is(err, errProvider) {
					t.Fatalf("charge: %v", err)
				}
				if got, err := r.db.Order(r.ctx, a, o.ID); err != nil || got.Status != parcela.OrderPending || len(got.Billings) != 0 {
					t.Fatalf("order after a failed charge: %v", err)
				}
			}
			r.ledger.balanced(t, r.db, a)
			intents, err := r.db.PaymentIntents(r.ctx, a)
			if err != nil || len(intents) != 2 {
				t.Fatalf("intents %v %v, want both voided", intents, err)
			}
		})
	}
}

// A slow provider: a cancel of the order commits while the charge waits on
// the provider, so the charge loses, voids its payment and answers 409.
func TestSlowProviderLosesTheRace(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			a := r.company("Escola " + sqldbtest.Suffix())
			offer, o := r.pendingOrder(a)
			waiting, release := make(chan string), make(chan struct{})
			r.ledger.set(nil, func(req parcela.IssueRequest) error {
				waiting <- req.PaymentID
				<-release
				return nil
			}, nil)
			done := make(chan error, 1)
			go func() {
				_, err := r.charge(a, offer, o, parcela.MethodPix, 3)
				done <- err
			}()
			issued := <-waiting
			if _, err := r.app.Orders.CancelOrder(r.ctx, a, o.ID, "customer_dropout"); err != nil {
				t.Fatal(err)
			}
			close(release)
			if err := <-done; parcela.ErrorCode(err) != parcela.EINVALIDSTATE {
				t.Fatalf("the charge that lost: %v", err)
			}
			if !r.ledger.isCanceled(issued) {
				t.Fatal("the losing charge's payment is live at the provider")
			}
			r.ledger.balanced(t, r.db, a)
		})
	}
}

// A provider slower than the intents' timeout: the recovery sweep voids the
// payment meanwhile, so the charge cannot store it; it issues another.
func TestSlowProviderPastTheTimeout(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			a := r.company("Escola " + sqldbtest.Suffix())
			offer, o := r.pendingOrder(a)
			waiting, release := make(chan string, 1), make(chan struct{})
			slow := true
			r.ledger.set(nil, func(req parcela.IssueRequest) error {
				if slow {
					slow = false
					waiting <- req.PaymentID
					<-release
				}
				return nil
			}, nil)
			done := make(chan error, 1)
			go func() {
				_, err := r.charge(a, offer, o, parcela.MethodBoleto, 3)
				done <- err
			}()
			first := <-waiting
			if rep := r.recoverIntents(a); rep.Moved != 1 {
				t.Fatalf("recovered %+v", rep)
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			byBill := r.ledger.balanced(t, r.db, a)
			got, err := r.db.Order(r.ctx, a, o.ID)
			if err != nil {
				t.Fatal(err)
			}
			live := byBill[got.Billings[0].Bills[0].ID]
			if !r.ledger.isCanceled(first) || len(live) != 1 || live[0].ID == first {
				t.Fatalf("first payment canceled %v; live %v", r.ledger.isCanceled(first), live)
			}
		})
	}
}

// The recovery sweep voids each intent on its own: one whose cancel the
// provider refuses is retried later, the others are voided.
func TestRecoverIntentsOneAtATime(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			a := r.company("Escola " + sqldbtest.Suffix())
			var issued []string
			r.ledger.set(nil, func(req parcela.IssueRequest) error {
				issued = append(issued, req.PaymentID)
				panic(crash{})
			}, nil)
			for range 2 {
				offer, o := r.pendingOrder(a)
				survive(t, func() { _, _ = r.charge(a, offer, o, parcela.MethodPix, 3) })
			}
			refused := issued[0]
			r.ledger.set(nil, nil, func(req parcela.CancelRequest) error {
				if req.PaymentID == refused {
					return errProvider
				}
				return nil
			})
			r.clock.Advance(parcela.IntentTimeout + time.Second)
			sweeps := r.app.Sweeps.Only(a.CompanyID)
			rep, err := sweeps.RecoverIntents(r.ctx)
			if err != nil || rep.Moved != 1 || len(rep.Failed) != 1 || rep.Failed[0].Row.ID != refused || !errors.Is(rep.Failed[0].Err, errProvider) {
				t.Fatalf("recovery %+v %v", rep, err)
			}
			if !r.ledger.isCanceled(issued[1]) || r.ledger.isCanceled(refused) {
				t.Fatal("the wrong payment was canceled")
			}
			r.clearHooks()
			if rep, _ := sweeps.RecoverIntents(r.ctx); rep.Moved != 0 {
				t.Fatalf("retried within its backoff: %+v", rep)
			}
			// Its claim for voiding is an update: it is stale again after the timeout.
			r.clock.Advance(max(parcela.SweepBackoff(1), parcela.IntentTimeout) + time.Second)
			if rep, err := sweeps.RecoverIntents(r.ctx); err != nil || rep.Moved != 1 {
				t.Fatalf("retry: %+v %v", rep, err)
			}
			r.ledger.balanced(t, r.db, a)
		})
	}
}

// One company's backlog does not hold another's rows for the next run: a
// sweep run goes on past a full batch, so a crash that left more intents
// than one batch holds is recovered in one run, the other company's
// intent, stale after them, with it.
func TestRecoverIntentsDrainsABacklogInOneRun(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			busy, quiet := r.company("Escola Cheia "+sqldbtest.Suffix()), r.company("Escola Calma "+sqldbtest.Suffix())
			record := func(a parcela.Auth) string {
				t.Helper()
				now := r.clock.Now()
				in := &parcela.PaymentIntent{ID: parcela.NewID(), CompanyID: a.CompanyID, Environment: a.Environment, BillID: parcela.NewID(),
					Method: parcela.MethodPix, AmountCents: 1000, NossoNumero: 1, State: parcela.IntentIssuing, CreatedAt: now, UpdatedAt: now}
				if err := r.db.RecordIntent(r.ctx, in); err != nil {
					t.Fatal(err)
				}
				return in.ID
			}
			const backlog = 501 // more than a run's batch of 500
			for range backlog {
				record(busy)
			}
			r.clock.Advance(time.Second)
			other := record(quiet)
			r.clock.Advance(parcela.IntentTimeout + time.Second)
			rep, err := r.app.Sweeps.Only(busy.CompanyID, quiet.CompanyID).RecoverIntents(r.ctx)
			if err != nil || len(rep.Failed) != 0 {
				t.Fatalf("recovery %+v %v", rep, err)
			}
			if rep.Moved != backlog+1 || !r.ledger.isCanceled(other) {
				t.Fatalf("one run voided %d of %d intents; the other company's voided: %v", rep.Moved, backlog+1, r.ledger.isCanceled(other))
			}
		})
	}
}

// Two instances' installment sweeps at once: each issues every installment
// at the provider (its calls held until the other's for the same bill has
// come), one stores each payment and the other voids its own. Every
// installment ends with one live payment, and nothing issued is left live
// at the provider unstored.
func TestTwoIssueSweepsAtOnce(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			a := r.company("Escola " + sqldbtest.Suffix())
			billing := r.activeBilling(a, 3)
			r.at(billing.Bills[len(billing.Bills)-1].DueDate.AddDate(0, 0, -5))
			// The calls are let through in pairs: the sweeps' calls for one
			// bill, whichever comes first.
			var mu sync.Mutex
			arrived := 0
			pairs := sync.NewCond(&mu)
			r.ledger.set(func(parcela.IssueRequest) error {
				mu.Lock()
				defer mu.Unlock()
				arrived++
				for want := (arrived + 1) / 2 * 2; arrived < want; {
					pairs.Wait()
				}
				pairs.Broadcast()
				return nil
			}, nil, nil)
			var reports [2]parcela.SweepReport
			var errs [2]error
			var wg sync.WaitGroup
			for i := range reports {
				wg.Go(func() { reports[i], errs[i] = r.app.Sweeps.Only(a.CompanyID).IssueDueInstallments(r.ctx) })
			}
			wg.Wait()
			moved := 0
			for i, rep := range reports {
				if errs[i] != nil || len(rep.Failed) != 0 {
					t.Fatalf("sweep %d: %+v %v", i, rep, errs[i])
				}
				moved += rep.Moved
			}
			if moved != 2 || arrived != 4 {
				t.Fatalf("%d installments issued by the sweeps, %d calls to the provider; want 2 and 4", moved, arrived)
			}
			byBill := r.ledger.balanced(t, r.db, a)
			for _, bill := range billing.Bills[1:] {
				if len(byBill[bill.ID]) != 1 {
					t.Fatalf("installment %d's live payments %v", bill.Number, byBill[bill.ID])
				}
			}
		})
	}
}

// A payment the provider issued whose change then failed to commit (the
// store's error, not a crash) is voided at once: canceled at the provider
// and its intent voided before the caller hears of the failure, so the
// recovery sweep finds nothing left, and the charge or the installment
// sweep, run again, issues exactly one.
func TestIssuedPaymentWhoseCommitFailedIsVoided(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			a := r.company("Escola " + sqldbtest.Suffix())
			failNew := func(c *parcela.Change) error {
				if len(c.NewPayments) > 0 {
					return &parcela.Error{Code: parcela.EUNAVAILABLE, Message: "the commit failed"}
				}
				return nil
			}
			check := func(step string, issues int) {
				t.Helper()
				r.ledger.mu.Lock()
				live, canceled, issued := len(r.ledger.live), len(r.ledger.canceled), r.ledger.issues
				r.ledger.mu.Unlock()
				if issued != issues || live != 0 || canceled != issues {
					t.Fatalf("%s: %d issued, %d live, %d canceled at the provider; want %d issued and canceled", step, issued, live, canceled, issues)
				}
				ins, err := r.db.PaymentIntents(r.ctx, a)
				if err != nil || len(ins) != issues {
					t.Fatalf("%s: intents %+v %v", step, ins, err)
				}
				for _, in := range ins {
					if in.State != parcela.IntentVoided {
						t.Fatalf("%s: intent %s %s, want voided", step, in.ID, in.State)
					}
				}
			}

			offer, o := r.pendingOrder(a)
			r.store.mu.Lock()
			r.store.failApply = failNew
			r.store.mu.Unlock()
			if _, err := r.charge(a, offer, o, parcela.MethodPix, 3); parcela.ErrorCode(err) != parcela.EUNAVAILABLE {
				t.Fatalf("charge whose commit failed: %v", err)
			}
			check("charge", 1)
			if got, err := r.db.Order(r.ctx, a, o.ID); err != nil || got.Status != parcela.OrderPending || len(got.Billings) != 0 {
				t.Fatalf("order after the failed charge: %+v %v", got, err)
			}
			if rep := r.recoverIntents(a); rep.Moved != 0 {
				t.Fatalf("the recovery voided %d intents the charge voided itself", rep.Moved)
			}
			r.store.mu.Lock()
			r.store.failApply = nil
			r.store.mu.Unlock()
			if _, err := r.charge(a, offer, o, parcela.MethodPix, 3); err != nil {
				t.Fatal(err)
			}
			r.ledger.balanced(t, r.db, a)
		})
	}
}
