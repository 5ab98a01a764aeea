package sqldb_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/bank"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// ledger is a provider that keeps the books a real one would: which
// payment ids it issued and which it canceled. Hooks fail a call, block it,
// or panic in it (a crash: nothing after it runs) at a chosen point.
type ledger struct {
	bank *bank.Simulated

	mu       sync.Mutex
	live     map[string]bool // issued and not canceled
	canceled map[string]bool
	issues   int
	// before runs before the bank issues, after once it has: the payment
	// exists at the provider even if the call then fails.
	before, after func(parcela.IssueRequest) error
	cancel        func(parcela.CancelRequest) error
	// canceled runs once the provider canceled a payment.
	canceledHook func(parcela.CancelRequest)
}

func newLedger() *ledger {
	return &ledger{bank: bank.NewSimulated(), live: map[string]bool{}, canceled: map[string]bool{}}
}

func (l *ledger) hooks() (before, after func(parcela.IssueRequest) error, cancel func(parcela.CancelRequest) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.before, l.after, l.cancel
}

// set replaces the hooks (nil: none).
func (l *ledger) set(before, after func(parcela.IssueRequest) error, cancel func(parcela.CancelRequest) error) {
	l.mu.Lock()
	l.before, l.after, l.cancel, l.canceledHook = before, after, cancel, nil
	l.mu.Unlock()
}

// afterCancel sets the hook that runs once a payment is canceled.
func (l *ledger) afterCancel(hook func(parcela.CancelRequest)) {
	l.mu.Lock()
	l.canceledHook = hook
	l.mu.Unlock()
}

func (l *ledger) Issue(ctx context.Context, req parcela.IssueRequest) (parcela.IssuedPayment, error) {
	before, after, _ := l.hooks()
	if before != nil {
		if err := before(req); err != nil {
			return parcela.IssuedPayment{}, err
		}
	}
	out, err := l.bank.Issue(ctx, req)
	if err != nil {
		return out, err
	}
	l.mu.Lock()
	l.issues++
	if !l.canceled[req.PaymentID] {
		l.live[req.PaymentID] = true
	}
	l.mu.Unlock()
	if after != nil {
		if err := after(req); err != nil {
			return parcela.IssuedPayment{}, err
		}
	}
	return out, nil
}

func (l *ledger) Cancel(ctx context.Context, req parcela.CancelRequest) error {
	if _, _, cancel := l.hooks(); cancel != nil {
		if err := cancel(req); err != nil {
			return err
		}
	}
	l.mu.Lock()
	delete(l.live, req.PaymentID)
	l.canceled[req.PaymentID] = true
	hook := l.canceledHook
	l.mu.Unlock()
	if hook != nil {
		hook(req)
	}
	return nil
}

func (l *ledger) isLive(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live[id]
}

func (l *ledger) isCanceled(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.canceled[id]
}

// balanced checks that nothing issued was lost or duplicated: the payments
// the provider issued and did not cancel are exactly the payments the
// companies' bills hold (whatever became of them since), no bill holds two
// unpaid ones, and no intent is left issuing or voiding. It returns the
// live (unpaid or paid) payments by bill.
func (l *ledger) balanced(t *testing.T, db *sqldb.DB, companies ...parcela.Auth) map[string][]*parcela.Payment {
	t.Helper()
	ctx := context.Background()
	var stored []string
	byBill := map[string][]*parcela.Payment{}
	for _, a := range companies {
		bills, _, _, err := db.Bills(ctx, a, parcela.BillFilter{Page: parcela.Page{Page: 1, PerPage: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bills {
			unpaid := 0
			for _, p := range b.Payments {
				stored = append(stored, p.ID)
				if p.Status == parcela.PaymentUnpaid || p.Status == parcela.PaymentPaid {
					byBill[b.ID] = append(byBill[b.ID], p)
				}
				if p.Status == parcela.PaymentUnpaid {
					unpaid++
				}
			}
			if unpaid > 1 {
				t.Fatalf("bill %s holds %d unpaid payments", b.ID, unpaid)
			}
		}
		intents, err := db.PaymentIntents(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range intents {
			if in.State != parcela.IntentVoided {
				t.Fatalf("intent %s left %s", in.ID, in.State)
			}
			if !l.isCanceled(in.ID) && l.isLive(in.ID) {
				t.Fatalf("voided intent %s is live at the provider", in.ID)
			}
		}
	}
	l.mu.Lock()
	var live []string
	for id := range l.live {
		live = append(live, id)
	}
	l.mu.Unlock()
	slices.Sort(stored)
	slices.Sort(live)
	if !slices.Equal(stored, live) {
		t.Fatalf("payments stored %v, live at the provider %v", stored, live)
	}
	return byBill
}

// lifecycleRig is one engine's store with a ledger behind the use cases
// and a clock of its own.
type lifecycleRig struct {
	t      *testing.T
	ctx    context.Context
	db     *sqldb.DB
	clock  *parcela.TestClock
	ledger *ledger
	store  *crashingStore
	app    *parcela.Services
}

func newRig(t *testing.T, e sqldb.Dialect) *lifecycleRig {
	clock := parcela.NewTestClock(raceStart)
	db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock, Enqueuer: quietEnqueuer{}})
	l, store := newLedger(), &crashingStore{DB: db}
	return &lifecycleRig{t: t, ctx: context.Background(), db: db, clock: clock, ledger: l, store: store,
		app: parcela.NewServices(store, l, nil, clock, sqldbtest.Links)}
}

// company creates a company named name and returns its sandbox Auth.
func (r *lifecycleRig) company(name string) parcela.Auth {
	r.t.Helper()
	c := parcela.NewCompany(name, "11222333000181", "test-"+sqldbtest.Suffix())
	if err := r.db.CreateCompany(r.ctx, &c); err != nil {
		r.t.Fatal(err)
	}
	return parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
}

// pendingOrder creates a pending order of a new financed (bolepix) offer.
func (r *lifecycleRig) pendingOrder(a parcela.Auth) (*parcela.Offer, *parcela.Order) {
	r.t.Helper()
	offer := financedOffer(r.t, r.app, a)
	o, err := r.app.Orders.CreateOrder(r.ctx, a, fromJSON[parcela.OrderRequest](r.t, `{"order": {"offer_id": "`+offer.ID+`",
		"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
		"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
		"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
	if err != nil {
		r.t.Fatal(err)
	}
	return offer, o
}

func (r *lifecycleRig) charge(a parcela.Auth, offer *parcela.Offer, o *parcela.Order, method string, installments int) (*parcela.Order, error) {
	return r.app.Orders.ChargeOrder(r.ctx, a, o.ID, fromJSON[parcela.ChargeRequest](r.t, `{"payment_configuration_id": "`+offer.PaymentConfigurations[0].ID+`",
		"due_day": 10, "installments": `+strconv.Itoa(installments)+`, "payment": {"payment_method": "`+method+`"},
		"signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`))
}

// activeBilling charges a new order with a boleto down payment and pays
// it: an active billing whose installments wait for their boletos.
func (r *lifecycleRig) activeBilling(a parcela.Auth, installments int) *parcela.Billing {
	r.t.Helper()
	offer, o := r.pendingOrder(a)
	o, err := r.charge(a, offer, o, parcela.MethodBoleto, installments)
	if err != nil {
		r.t.Fatal(err)
	}
	dp := o.Billings[0].Bills[0].Payments[0]
	if _, _, err := r.app.Payments.PayPayment(r.ctx, a, dp.ID, parcela.Settlement{}); err != nil {
		r.t.Fatal(err)
	}
	b, err := r.db.Billing(r.ctx, a, o.Billings[0].ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r *lifecycleRig) bill(a parcela.Auth, id string) (*parcela.Bill, *parcela.Company) {
	r.t.Helper()
	b, c, err := r.db.Bill(r.ctx, a, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return b, c
}

func (r *lifecycleRig) at(t time.Time) { r.clock.Set(t) }

// crashingStore is the store with a hook after a change is applied, where
// a test can make the process die (panic) with the change committed.
type crashingStore struct {
	*sqldb.DB
	mu         sync.Mutex
	afterApply func(*parcela.Change)
	// failApply, when set, fails a change before it is stored (a commit
	// that failed) with what it returns.
	failApply func(*parcela.Change) error
}

// crashAfterApply sets the hook (nil: none).
func (s *crashingStore) crashAfterApply(hook func(*parcela.Change)) {
	s.mu.Lock()
	s.afterApply = hook
	s.mu.Unlock()
}

func (s *crashingStore) Apply(ctx context.Context, c *parcela.Change) error {
	s.mu.Lock()
	fail := s.failApply
	s.mu.Unlock()
	if fail != nil {
		if err := fail(c); err != nil {
			return err
		}
	}
	if err := s.DB.Apply(ctx, c); err != nil {
		return err
	}
	s.mu.Lock()
	hook := s.afterApply
	s.mu.Unlock()
	if hook != nil {
		hook(c)
	}
	return nil
}
