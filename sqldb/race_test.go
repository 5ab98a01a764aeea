package sqldb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// Racing changes of one order, billing or payment, released together in
// real concurrent transactions, round after round, on every engine. After
// each round the state must be whole (raceInvariants), every change answered
// with success must show in it, and the loser must have been told 409
// invalid_state (or, paying a paid payment, succeeded without a change).

const raceRounds = 30

// quietEnqueuer takes the jobs of the races' transactions: no webhook
// subscribes, so there are no deliveries, and the voids go nowhere.
type quietEnqueuer struct{}

func (quietEnqueuer) EnqueueVoids(context.Context, *sqldb.Tx, []parcela.CancelRequest) error {
	return nil
}

func (quietEnqueuer) EnqueueDeliveries(context.Context, *sqldb.Tx, []sqldb.DeliveryJob) error {
	return nil
}

var raceStart = time.Date(2026, 11, 21, 15, 30, 0, 0, parcela.SaoPaulo)

// raceRound is one round's fresh order: its own company, so that its sweeps
// and clock touch nothing else.
type raceRound struct {
	t     *testing.T
	ctx   context.Context
	db    *sqldb.DB
	clock *parcela.TestClock
	app   *parcela.Services
	a     parcela.Auth
	order *parcela.Order
}

// newRound creates a pending order of an offer that finances in up to 3
// bills, and charges it (unless pending) with a Pix down payment and
// installments bills in all.
func newRound(t *testing.T, db *sqldb.DB, installments int, pending bool) *raceRound {
	t.Helper()
	ctx := context.Background()
	clock := parcela.NewTestClock(raceStart)
	r := &raceRound{t: t, ctx: ctx, db: db, clock: clock, app: sqldbtest.Services(db, clock)}
	c := sqldbtest.Company(t, db)
	r.a = parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
	offer := financedOffer(t, r.app, r.a)
	o, err := r.app.Orders.CreateOrder(ctx, r.a, fromJSON[parcela.OrderRequest](t, `{"order": {"offer_id": "`+offer.ID+`",
		"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
		"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
		"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r.order = o
	if !pending {
		if r.order, err = r.app.Orders.ChargeOrder(ctx, r.a, o.ID, r.chargeRequest(offer, installments)); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *raceRound) chargeRequest(offer *parcela.Offer, installments int) parcela.ChargeRequest {
	return fromJSON[parcela.ChargeRequest](r.t, fmt.Sprintf(`{"payment_configuration_id": %q, "due_day": 10, "installments": %d,
		"payment": {"payment_method": "pix"}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`, offer.PaymentConfigurations[0].ID, installments))
}

// state reads the round's order as it stands.
func (r *raceRound) state() *parcela.Order {
	r.t.Helper()
	o, err := r.db.Order(r.ctx, r.a, r.order.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return o
}

func (r *raceRound) bill(number int) *parcela.Bill {
	r.t.Helper()
	o := r.state()
	return o.Billings[0].Bills[number]
}

// unpaid returns the bill's unpaid payment.
func (r *raceRound) unpaid(number int) *parcela.Payment {
	r.t.Helper()
	for _, p := range r.bill(number).Payments {
		if p.Status == parcela.PaymentUnpaid {
			return p
		}
	}
	r.t.Fatalf("bill %d has no unpaid payment", number)
	return nil
}

// overdueFirst moves the round's clock five days past the first
// installment's due date, expires its boleto and marks its bill overdue; it
// returns that bill, as it was before, and the company's sweeps.
func (r *raceRound) overdueFirst() (*parcela.Bill, *parcela.Sweeps) {
	r.t.Helper()
	bill := r.bill(1)
	sweeps := r.app.Sweeps.Only(r.a.CompanyID)
	r.clock.Set(bill.DueDate.AddDate(0, 0, 5))
	if _, err := sweeps.ExpireDuePayments(r.ctx); err != nil {
		r.t.Fatal(err)
	}
	if rep, err := sweeps.MarkOverdue(r.ctx); err != nil || rep.Moved != 1 {
		r.t.Fatalf("overdue: %+v %v", rep, err)
	}
	return bill, sweeps
}

// activate pays the down payment and issues every installment's boleto,
// moving the round's clock to the last installment's issue window.
func (r *raceRound) activate() {
	r.t.Helper()
	if _, _, err := r.app.Payments.PayPayment(r.ctx, r.a, r.unpaid(0).ID, parcela.Settlement{}); err != nil {
		r.t.Fatal(err)
	}
	bills := r.state().Billings[0].Bills
	r.clock.Set(bills[len(bills)-1].DueDate.AddDate(0, 0, -5))
	if rep, err := r.app.Sweeps.Only(r.a.CompanyID).IssueDueInstallments(r.ctx); err != nil || rep.Moved != len(bills)-1 || len(rep.Failed) > 0 {
		r.t.Fatalf("issued %d installments (%v, %v), want %d", rep.Moved, err, rep.Failed, len(bills)-1)
	}
}

// race runs fns at the same instant and returns their errors.
func race(fns ...func() error) []error {
	errs := make([]error, len(fns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			<-start
			errs[i] = fn()
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// ok tells a success from a refusal for the state; anything else fails the test.
func (r *raceRound) ok(what string, err error) bool {
	r.t.Helper()
	switch parcela.ErrorCode(err) {
	case "":
		return true
	case parcela.EINVALIDSTATE:
		return false
	}
	r.t.Fatalf("%s: %v", what, err)
	return false
}

// raceInvariants checks the state every change must leave: at most one
// live payment per bill, none on a bill no longer open; a paid bill has a
// paid payment and a paid payment a paid bill; a billing whose bills are
// all paid is finished, and its order too; a canceled billing has no open
// bill, and a canceled order no open billing; an order has one original
// billing at most.
func (r *raceRound) raceInvariants() {
	r.t.Helper()
	o := r.state()
	if len(o.Billings) > 1 {
		r.t.Fatalf("order %s has %d billings", o.ID, len(o.Billings))
	}
	for _, b := range o.Billings {
		allPaid := true
		for _, bill := range b.Bills {
			// A bill is paid by one payment's amount, or by parts: a payment
			// that received part of it is kept paid beside the one that
			// paid it (closePayments), so only one may have received its
			// whole amount.
			unpaid, paid, whole := 0, 0, 0
			for _, p := range bill.Payments {
				switch p.Status {
				case parcela.PaymentUnpaid:
					unpaid++
				case parcela.PaymentPaid:
					paid++
					if p.PaidAmountCents >= p.AmountCents {
						whole++
					}
				}
			}
			open := bill.Status == parcela.BillPending || bill.Status == parcela.BillOverdue
			switch {
			case unpaid > 1:
				r.t.Fatalf("bill %d has %d live payments", bill.Number, unpaid)
			case unpaid > 0 && !open:
				r.t.Fatalf("bill %d is %s with a live payment", bill.Number, bill.Status)
			case (bill.Status == parcela.BillPaid) != (paid > 0) || whole > 1:
				r.t.Fatalf("bill %d is %s with %d paid payments, %d paid in whole", bill.Number, bill.Status, paid, whole)
			case b.Status == parcela.BillingCanceled && open:
				r.t.Fatalf("canceled billing with bill %d %s", bill.Number, bill.Status)
			}
			allPaid = allPaid && bill.Status == parcela.BillPaid
		}
		if allPaid && (b.Status != parcela.BillingFinished || o.Status != parcela.OrderFinished) {
			r.t.Fatalf("every bill paid, billing %s, order %s", b.Status, o.Status)
		}
		if !allPaid && b.Status == parcela.BillingFinished {
			r.t.Fatal("a billing with bills unpaid is finished")
		}
		if o.Status == parcela.OrderCanceled && b.Open() {
			r.t.Fatalf("canceled order with a %s billing", b.Status)
		}
	}
}

func eventNames(events []parcela.Event) []string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.Entity + " " + e.Event
	}
	return names
}

// eachRace runs rounds of one racing pair on every engine.
func eachRace(t *testing.T, round func(t *testing.T, db *sqldb.DB)) {
	t.Helper()
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db := sqldbtest.Open(t, e, sqldb.Config{Enqueuer: quietEnqueuer{}})
			rounds := raceRounds
			if testing.Short() {
				rounds = 5
			}
			for range rounds {
				round(t, db)
			}
		})
	}
}

func TestRacePayAndExpireDownPayment(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		p := r.unpaid(0)
		errs := race(
			func() error {
				_, _, err := r.app.Payments.PayPayment(r.ctx, r.a, p.ID, parcela.Settlement{})
				return err
			},
			func() error { _, _, err := r.app.Payments.ExpirePayment(r.ctx, r.a, p.ID); return err },
		)
		paid, expired := r.ok("pay", errs[0]), r.ok("expire", errs[1])
		r.raceInvariants()
		o := r.state()
		status := o.Billings[0].Bills[0].Payments[0].Status
		switch {
		case paid == expired:
			t.Fatalf("pay ok %v, expire ok %v", paid, expired)
		case paid && (status != parcela.PaymentPaid || o.Billings[0].Status != parcela.BillingActive):
			t.Fatalf("pay answered ok; payment %s, billing %s", status, o.Billings[0].Status)
		case expired && (status != parcela.PaymentExpired || o.Billings[0].Status != parcela.BillingCanceled || o.Status != parcela.OrderCanceled):
			t.Fatalf("expire answered ok; payment %s, billing %s, order %s", status, o.Billings[0].Status, o.Status)
		}
	})
}

func TestRaceExpireAndExpireInstallment(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 2, false)
		r.activate()
		p := r.unpaid(1)
		expire := func() error { _, _, err := r.app.Payments.ExpirePayment(r.ctx, r.a, p.ID); return err }
		errs := race(expire, expire)
		if a, b := r.ok("expire", errs[0]), r.ok("expire", errs[1]); a == b {
			t.Fatalf("expiries ok %v and %v, want one", a, b)
		}
		r.raceInvariants()
		if bill := r.bill(1); len(bill.Payments) != 2 || bill.Payments[0].Status != parcela.PaymentExpired || bill.Payments[1].Status != parcela.PaymentUnpaid {
			t.Fatalf("bill %s with %d payments, want the expired one and one re-issue", bill.Status, len(bill.Payments))
		}
	})
}

func TestRacePayTwoInstallments(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		r.activate()
		p1, p2 := r.unpaid(1), r.unpaid(2)
		pay := func(id string) func() error {
			return func() error { _, _, err := r.app.Payments.PayPayment(r.ctx, r.a, id, parcela.Settlement{}); return err }
		}
		errs := race(pay(p1.ID), pay(p2.ID))
		if !r.ok("pay", errs[0]) || !r.ok("pay", errs[1]) {
			t.Fatalf("paying two bills: %v", errs)
		}
		r.raceInvariants()
		if o := r.state(); o.Status != parcela.OrderFinished {
			t.Fatalf("order %s after its last bills were paid", o.Status)
		}
		events, err := db.Events(r.ctx, r.a, r.order.ID)
		if err != nil || len(events) != 2 || events[1].Event != parcela.OrderFinished {
			t.Fatalf("order events %v %v, want in_progress and finished", eventNames(events), err)
		}
	})
}

func TestRacePayAndExpireInstallment(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 2, false)
		r.activate()
		p := r.unpaid(1)
		errs := race(
			func() error {
				_, _, err := r.app.Payments.PayPayment(r.ctx, r.a, p.ID, parcela.Settlement{})
				return err
			},
			func() error { _, _, err := r.app.Payments.ExpirePayment(r.ctx, r.a, p.ID); return err },
		)
		paid, expired := r.ok("pay", errs[0]), r.ok("expire", errs[1])
		r.raceInvariants()
		bill := r.bill(1)
		switch {
		case paid == expired:
			t.Fatalf("pay ok %v, expire ok %v", paid, expired)
		case paid && (bill.Status != parcela.BillPaid || len(bill.Payments) != 1):
			t.Fatalf("pay answered ok; bill %s with %d payments", bill.Status, len(bill.Payments))
		case expired && (bill.Status != parcela.BillPending || len(bill.Payments) != 2 || bill.Payments[0].Status != parcela.PaymentExpired):
			t.Fatalf("expire answered ok; bill %s with %d payments", bill.Status, len(bill.Payments))
		}
	})
}

func TestRacePayAndPay(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		p := r.unpaid(0)
		pay := func() error {
			_, _, err := r.app.Payments.PayPayment(r.ctx, r.a, p.ID, parcela.Settlement{})
			return err
		}
		errs := race(pay, pay)
		// Paying a paid payment is a success that changes nothing.
		if !r.ok("pay", errs[0]) || !r.ok("pay", errs[1]) {
			t.Fatalf("paying twice: %v", errs)
		}
		r.raceInvariants()
		events, err := db.Events(r.ctx, r.a, r.bill(0).ID)
		if err != nil || len(events) != 2 || events[1].Event != parcela.BillPaid {
			t.Fatalf("bill events %v %v, want pending and one paid", eventNames(events), err)
		}
	})
}

func TestRaceCancelBillingAndPay(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		p, billing := r.unpaid(0), r.order.Billings[0]
		errs := race(
			func() error {
				_, err := r.app.Billings.CancelBilling(r.ctx, r.a, billing.ID, "customer_dropout")
				return err
			},
			func() error {
				_, _, err := r.app.Payments.PayPayment(r.ctx, r.a, p.ID, parcela.Settlement{})
				return err
			},
		)
		canceled, paid := r.ok("cancel", errs[0]), r.ok("pay", errs[1])
		r.raceInvariants()
		o := r.state()
		status := o.Billings[0].Bills[0].Payments[0].Status
		switch {
		case !canceled && !paid:
			t.Fatal("neither cancel nor pay succeeded")
		case canceled && (o.Billings[0].Status != parcela.BillingCanceled || o.Status != parcela.OrderCanceled):
			t.Fatalf("cancel answered ok; billing %s, order %s", o.Billings[0].Status, o.Status)
		case paid && status != parcela.PaymentPaid:
			t.Fatalf("pay answered ok; payment %s", status)
		case !paid && status == parcela.PaymentPaid:
			t.Fatal("pay refused; payment paid")
		}
	})
}

func TestRaceChargeAndCancelOrder(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, true)
		offer, err := r.app.Catalog.Offer(r.ctx, r.a, r.order.OfferID)
		if err != nil {
			t.Fatal(err)
		}
		errs := race(
			func() error {
				_, err := r.app.Orders.ChargeOrder(r.ctx, r.a, r.order.ID, r.chargeRequest(offer, 3))
				return err
			},
			func() error {
				_, err := r.app.Orders.CancelOrder(r.ctx, r.a, r.order.ID, "customer_dropout")
				return err
			},
		)
		charged, canceled := r.ok("charge", errs[0]), r.ok("cancel", errs[1])
		r.raceInvariants()
		o := r.state()
		switch {
		case !charged && !canceled:
			t.Fatal("neither charge nor cancel succeeded")
		case charged && len(o.Billings) != 1:
			t.Fatalf("charge answered ok; %d billings", len(o.Billings))
		case !charged && len(o.Billings) != 0:
			t.Fatal("charge refused; a billing exists")
		case canceled && o.Status != parcela.OrderCanceled:
			t.Fatalf("cancel answered ok; order %s", o.Status)
		case !canceled && o.Status != parcela.OrderInProgress:
			t.Fatalf("cancel refused; order %s", o.Status)
		}
	})
}

// Two settlements of one payment with different amounts, at once: both
// are counted, whichever commits first, until the payment is paid; one
// that finds it paid changes nothing, as a settlement of a paid payment
// does. The bill is paid once.
func TestRacePartialSettlements(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		p := r.unpaid(0)
		a, b := p.AmountCents/4, p.AmountCents/3 // together short of the amount
		c := p.AmountCents - a - b               // pays it with either
		received := func() (int64, *parcela.Bill) {
			bill := r.bill(0)
			return bill.Payments[0].PaidAmountCents, bill
		}
		settle := func(amount int64) func() error {
			return func() error {
				_, _, err := r.app.Payments.PayPayment(r.ctx, r.a, p.ID, parcela.Settlement{PaidAmountCents: &amount})
				return err
			}
		}
		errs := race(settle(a), settle(b))
		if !r.ok("settle", errs[0]) || !r.ok("settle", errs[1]) {
			t.Fatalf("settlements refused: %v", errs)
		}
		r.raceInvariants()
		if got, bill := received(); got != a+b || bill.Status != parcela.BillPending || bill.Payments[0].Status != parcela.PaymentUnpaid {
			t.Fatalf("received %d, want %d; bill %s, payment %s", got, a+b, bill.Status, bill.Payments[0].Status)
		}
		errs = race(settle(c), settle(b))
		if !r.ok("settle", errs[0]) || !r.ok("settle", errs[1]) {
			t.Fatalf("settlements refused: %v", errs)
		}
		r.raceInvariants()
		// c first pays it, and b finds it paid; or b, then c.
		if got, bill := received(); (got != a+b+c && got != a+2*b+c) || bill.Status != parcela.BillPaid {
			t.Fatalf("received %d, want %d or %d; bill %s", got, a+b+c, a+2*b+c, bill.Status)
		}
		events, err := db.Events(r.ctx, r.a, p.BillID)
		if err != nil || len(events) != 2 || events[1].Event != parcela.BillPaid {
			t.Fatalf("bill events %v %v, want pending and one paid", eventNames(events), err)
		}
	})
}

// A penalty waiver and the settlement of a late installment's boleto, at
// once, while the overdue, issue and expiry sweeps run on the same bill:
// one of the two wins. Paid first, the bill is paid and the waiver is
// refused; waived first, the boleto priced with the penalty is canceled
// and its settlement refused. No sweep fails.
func TestRaceWaiveAndPayLateInstallment(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 2, false)
		r.activate()
		bill, sweeps := r.overdueFirst()
		p := r.unpaid(1)
		until := r.clock.Now().AddDate(0, 1, 0)
		errs := race(
			func() error { _, _, err := r.app.Bills.WaivePenalties(r.ctx, r.a, bill.ID, &until); return err },
			func() error {
				_, _, err := r.app.Payments.PayPayment(r.ctx, r.a, p.ID, parcela.Settlement{})
				return err
			},
			func() error { _, err := sweeps.MarkOverdue(r.ctx); return err },
			func() error { _, err := sweeps.IssueDueInstallments(r.ctx); return err },
			func() error { _, err := sweeps.ExpireDuePayments(r.ctx); return err },
		)
		for _, err := range errs[2:] {
			if err != nil {
				t.Fatalf("sweep: %v", err)
			}
		}
		waived, paid := r.ok("waive", errs[0]), r.ok("pay", errs[1])
		r.raceInvariants()
		got := r.bill(1)
		switch {
		case waived == paid:
			t.Fatalf("waive ok %v, pay ok %v", waived, paid)
		case paid && (got.Status != parcela.BillPaid || got.DisablePenaltiesUntil != nil):
			t.Fatalf("pay answered ok; bill %s, waived until %v", got.Status, got.DisablePenaltiesUntil)
		case waived && (got.Payments[1].ID != p.ID || got.Payments[1].Status != parcela.PaymentCanceled || got.DisablePenaltiesUntil == nil):
			t.Fatalf("waive answered ok; bill %s, late boleto %s", got.Status, got.Payments[1].Status)
		}
	})
}
