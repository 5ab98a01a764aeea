package sqldb_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// More racing pairs, on every engine, round after round: bank notices of
// one payment, a settlement against the payer's issue on demand, a
// waiver against a settlement and an expiry, the issue sweeps against a
// cancel, and a cancel against a card's approval.

// settle settles payment id as the bank's notice would.
func (r *raceRound) settle(id, notice string, amount int64) func() error {
	return func() error {
		s := parcela.Settlement{NoticeID: notice}
		if amount > 0 {
			s.PaidAmountCents = &amount
		}
		_, _, err := r.app.Payments.PayPayment(r.ctx, r.a, id, s)
		return err
	}
}

// received is what payment id received, and its bill.
func (r *raceRound) received(number int, id string) (int64, *parcela.Bill) {
	r.t.Helper()
	bill := r.bill(number)
	for _, p := range bill.Payments {
		if p.ID == id {
			return p.PaidAmountCents, bill
		}
	}
	r.t.Fatalf("payment %s not in bill %d", id, number)
	return 0, nil
}

// paidEvents counts the bill.paid events of a bill.
func (r *raceRound) paidEvents(billID string) int {
	r.t.Helper()
	events, err := r.db.Events(r.ctx, r.a, billID)
	if err != nil {
		r.t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Event == parcela.BillPaid {
			n++
		}
	}
	return n
}

// noIntentInFlight fails when an intent is left neither stored (deleted)
// nor voided.
func (r *raceRound) noIntentInFlight() {
	r.t.Helper()
	intents, err := r.db.PaymentIntents(r.ctx, r.a)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, in := range intents {
		if in.State != parcela.IntentVoided {
			r.t.Fatalf("intent %s of bill %s left %s", in.ID, in.BillID, in.State)
		}
	}
}

func (r *raceRound) notice(id string) *parcela.SettlementNotice {
	r.t.Helper()
	n, err := r.db.SettlementNotice(r.ctx, r.a, id)
	if parcela.ErrorCode(err) == parcela.ENOTFOUND {
		return nil
	} else if err != nil {
		r.t.Fatal(err)
	}
	return n
}

// One notice delivered twice at once, part of the payment and then the
// rest: both deliveries succeed, the money is counted once, the bill is
// paid once.
func TestRaceOneNoticeTwice(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		p := r.unpaid(0)
		part := p.AmountCents / 4
		n1, n2 := "E1"+sqldbtest.Suffix(), "E2"+sqldbtest.Suffix()
		for _, err := range race(r.settle(p.ID, n1, part), r.settle(p.ID, n1, part)) {
			if !r.ok("notice", err) {
				t.Fatalf("a notice delivered twice: %v", err)
			}
		}
		r.raceInvariants()
		if got, bill := r.received(0, p.ID); got != part || bill.Status != parcela.BillPending {
			t.Fatalf("a partial notice twice: received %d, want %d; bill %s", got, part, bill.Status)
		}
		for _, err := range race(r.settle(p.ID, n2, 0), r.settle(p.ID, n2, 0)) {
			if !r.ok("notice", err) {
				t.Fatalf("the rest's notice delivered twice: %v", err)
			}
		}
		r.raceInvariants()
		got, bill := r.received(0, p.ID)
		if got != p.AmountCents || bill.Status != parcela.BillPaid || r.paidEvents(bill.ID) != 1 {
			t.Fatalf("received %d of %d; bill %s with %d paid events", got, p.AmountCents, bill.Status, r.paidEvents(bill.ID))
		}
		if n := r.notice(n1); n == nil || n.PaidAmountCents != part {
			t.Fatalf("notice %s: %+v", n1, n)
		}
		if n := r.notice(n2); n == nil || n.PaidAmountCents != p.AmountCents-part {
			t.Fatalf("notice %s: %+v", n2, n)
		}
	})
}

// Two notices of a payment paid in part: two parts that together pay the
// rest are both counted, whichever lands first; two notices each of the
// whole rest pay it once, and the one that finds it paid is refused (its
// money reaches no open payment) and not recorded.
func TestRaceTwoNoticesOfAPartlyPaidPayment(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		for _, exact := range []bool{true, false} {
			r := newRound(t, db, 3, false)
			p := r.unpaid(0)
			first := p.AmountCents / 4
			if err := r.settle(p.ID, "E0"+sqldbtest.Suffix(), first)(); err != nil {
				t.Fatal(err)
			}
			rest := p.AmountCents - first
			a, b := rest/3, rest-rest/3
			if !exact {
				a, b = rest, rest
			}
			n1, n2 := "E1"+sqldbtest.Suffix(), "E2"+sqldbtest.Suffix()
			errs := race(r.settle(p.ID, n1, a), r.settle(p.ID, n2, b))
			ok1, ok2 := r.ok("notice 1", errs[0]), r.ok("notice 2", errs[1])
			r.raceInvariants()
			got, bill := r.received(0, p.ID)
			switch {
			case exact && (!ok1 || !ok2):
				t.Fatalf("two parts of the rest: %v", errs)
			case !exact && ok1 == ok2:
				t.Fatalf("two notices of the whole rest: %v", errs)
			case got != p.AmountCents || bill.Status != parcela.BillPaid || r.paidEvents(bill.ID) != 1:
				t.Fatalf("exact %v: received %d of %d; bill %s, %d paid events", exact, got, p.AmountCents, bill.Status, r.paidEvents(bill.ID))
			case (r.notice(n1) != nil) != ok1 || (r.notice(n2) != nil) != ok2:
				t.Fatalf("notices recorded %v %v, answered %v %v", r.notice(n1) != nil, r.notice(n2) != nil, ok1, ok2)
			}
		}
	})
}

// The bank settling an installment's boleto while the payer asks its
// checkout for a Pix of the same bill: the bill is paid once by the
// boleto; a Pix issued first is canceled by the settlement, and one asked
// for after it is refused. No live payment is left on the paid bill.
func TestRaceSettleAndIssuePix(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		b := checkoutSetup(t, db)
		r := &raceRound{t: t, ctx: b.ctx, db: db, clock: b.clock, app: b.app, a: b.a, order: b.charge(3, parcela.MethodPix)}
		r.activate()
		bill := r.bill(1)
		boleto := r.unpaid(1)
		var pix *parcela.Payment
		errs := race(
			r.settle(boleto.ID, "E1"+sqldbtest.Suffix(), 0),
			func() (err error) {
				pix, err = r.app.Checkout.IssuePayment(r.ctx, parcela.Sandbox, bill.ID, bill.AuthenticationCode, parcela.MethodPix)
				return err
			},
		)
		if !r.ok("settle", errs[0]) {
			t.Fatalf("settlement refused: %v", errs[0])
		}
		issued := r.ok("issue", errs[1])
		r.raceInvariants()
		got := r.bill(1)
		if got.Status != parcela.BillPaid || r.paidEvents(got.ID) != 1 {
			t.Fatalf("bill %s with %d paid events", got.Status, r.paidEvents(got.ID))
		}
		for _, p := range got.Payments {
			switch {
			case p.ID == boleto.ID && (p.Status != parcela.PaymentPaid || p.PaidAmountCents != boleto.AmountCents):
				t.Fatalf("the boleto settled is %s with %d cents", p.Status, p.PaidAmountCents)
			case p.ID != boleto.ID && (!issued || p.ID != pix.ID || p.Status != parcela.PaymentCanceled):
				t.Fatalf("a %s payment %s beside the boleto (issue ok %v)", p.Method, p.Status, issued)
			}
		}
		if issued && len(got.Payments) != 2 {
			t.Fatalf("the Pix issued is not on its bill: %d payments", len(got.Payments))
		}
	})
}

// A penalty waiver, the bank's settlement of the late boleto (paid before
// it expired, its notice arriving after) and the boleto's expiry, all at
// once: whichever comes first, the notice reaches the bill, still open,
// and pays it once (a boleto the waiver canceled or the expiry expired
// first is then paid: the bank took the money before), and nothing else
// did.
func TestRaceWaiveSettleAndExpire(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 2, false)
		r.activate()
		bill, _ := r.overdueFirst()
		p := r.unpaid(1)
		paidAt := p.ExpiresAt.Add(-time.Hour)
		r.clock.Set(p.ExpiresAt.Add(time.Hour))
		until := r.clock.Now().AddDate(0, 1, 0)
		errs := race(
			func() error { _, _, err := r.app.Bills.WaivePenalties(r.ctx, r.a, bill.ID, &until); return err },
			func() error {
				_, _, err := r.app.Payments.PayPayment(r.ctx, r.a, p.ID, parcela.Settlement{PaidAt: &paidAt})
				return err
			},
			func() error { _, _, err := r.app.Payments.ExpirePayment(r.ctx, r.a, p.ID); return err },
		)
		waived, paid, expired := r.ok("waive", errs[0]), r.ok("pay", errs[1]), r.ok("expire", errs[2])
		r.raceInvariants()
		got := r.bill(1)
		var status string
		for _, q := range got.Payments {
			if q.ID == p.ID {
				status = q.Status
			}
			if q.Status == parcela.PaymentUnpaid {
				t.Errorf("payment %s left unpaid on a paid bill", q.ID)
			}
		}
		switch {
		case !paid:
			t.Fatalf("the notice was refused (waive ok %v, expire ok %v)", waived, expired)
		case status != parcela.PaymentPaid || got.Status != parcela.BillPaid:
			t.Fatalf("waive ok %v, expire ok %v; payment %s, bill %s", waived, expired, status, got.Status)
		case r.paidEvents(got.ID) != 1:
			t.Fatalf("%d paid events", r.paidEvents(got.ID))
		}
	})
}

// The issue sweeps of two instances and a cancel of the order, at once,
// on an order whose installments need their boletos: the order is
// canceled, every boleto a sweep issued is on a canceled bill (voided
// with it) and no intent is left behind.
func TestRaceIssueSweepsAndCancelOrder(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		if _, _, err := r.app.Payments.PayPayment(r.ctx, r.a, r.unpaid(0).ID, parcela.Settlement{}); err != nil {
			t.Fatal(err)
		}
		bills := r.state().Billings[0].Bills
		r.clock.Set(bills[len(bills)-1].DueDate.AddDate(0, 0, -5))
		sweeps := r.app.Sweeps.Only(r.a.CompanyID)
		other := sqldbtest.Services(db, r.clock).Sweeps.Only(r.a.CompanyID)
		var reps [2]parcela.SweepReport
		errs := race(
			func() (err error) { reps[0], err = sweeps.IssueDueInstallments(r.ctx); return err },
			func() (err error) { reps[1], err = other.IssueDueInstallments(r.ctx); return err },
			func() error {
				_, err := r.app.Orders.CancelOrder(r.ctx, r.a, r.order.ID, "customer_dropout")
				return err
			},
		)
		if errs[0] != nil || errs[1] != nil || len(reps[0].Failed)+len(reps[1].Failed) > 0 {
			t.Fatalf("sweeps: %v %+v %+v", errs[:2], reps[0], reps[1])
		}
		if !r.ok("cancel", errs[2]) {
			t.Fatalf("cancel refused: %v", errs[2])
		}
		r.raceInvariants()
		o := r.state()
		if o.Status != parcela.OrderCanceled {
			t.Fatalf("order %s", o.Status)
		}
		issued := 0
		for _, bill := range o.Billings[0].Bills[1:] {
			if bill.Status != parcela.BillCanceled || len(bill.Payments) > 1 {
				t.Fatalf("bill %d %s with %d payments", bill.Number, bill.Status, len(bill.Payments))
			}
			issued += len(bill.Payments)
		}
		if issued != reps[0].Moved+reps[1].Moved {
			t.Fatalf("%d boletos on the bills, the sweeps reported %d and %d", issued, reps[0].Moved, reps[1].Moved)
		}
		r.noIntentInFlight()
	})
}

// approvingAcquirer is the simulated acquirer, recording what it approved
// and what it voided.
type approvingAcquirer struct {
	countingAcquirer
	approved []string
}

func (a *approvingAcquirer) Authorize(ctx context.Context, req parcela.CardAuthorization) (parcela.CardDecision, error) {
	d, err := a.SimulatedAcquirer.Authorize(ctx, req)
	if err == nil && d.Approved {
		a.mu.Lock()
		a.approved = append(a.approved, req.PaymentID)
		a.mu.Unlock()
	}
	return d, err
}

// A cancel of the order while the payer's card is at the acquirer, on an
// order charged for a card and on one charged with a Pix: an approval is
// either recorded as paying the first bill or voided at the acquirer,
// never kept unrecorded; a card answered ok paid the bill.
func TestRaceCancelOrderAndCard(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		for _, method := range []string{parcela.MethodCreditCard, parcela.MethodPix} {
			b := checkoutSetup(t, db)
			acq := &approvingAcquirer{}
			b.useAcquirer(acq)
			o := b.charge(3, method)
			first := o.Billings[0].Bills[0]
			var paid *parcela.Payment
			errs := race(
				func() (err error) { paid, err = b.payByCard(first, card("5555555555554444", "123")); return err },
				func() error { _, err := b.app.Orders.CancelOrder(b.ctx, b.a, o.ID, "customer_dropout"); return err },
			)
			r := &raceRound{t: t, ctx: b.ctx, db: db, clock: b.clock, app: b.app, a: b.a, order: o}
			byCard, canceled := r.ok("card", errs[0]), r.ok("cancel", errs[1])
			r.raceInvariants()
			if !byCard && !canceled {
				t.Fatalf("%s: neither card nor cancel: %v", method, errs)
			}
			got := b.bill(first.ID)
			if byCard != (got.Status == parcela.BillPaid) || byCard && (paid == nil || paid.Status != parcela.PaymentPaid) {
				t.Fatalf("%s: card ok %v; bill %s", method, byCard, got.Status)
			}
			for _, id := range acq.approved {
				i := slices.IndexFunc(got.Payments, func(p *parcela.Payment) bool { return p.ID == id })
				recorded := i >= 0 && got.Payments[i].Status == parcela.PaymentPaid
				if recorded == slices.Contains(acq.voided, id) {
					t.Fatalf("%s: approval %s recorded as paid %v, voided %v", method, id, recorded, !recorded)
				}
			}
			r.noIntentInFlight()
		}
	})
}

// One notice id sent at once for two settlements: of one payment with
// two amounts, and of two payments of two orders. One is applied; the
// other is refused as naming another settlement, and nothing of it is
// counted.
func TestRaceOneNoticeIDForTwoSettlements(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		p := r.unpaid(0)
		id := "E1" + sqldbtest.Suffix()
		a, b := p.AmountCents/4, p.AmountCents/3
		errs := race(r.settle(p.ID, id, a), r.settle(p.ID, id, b))
		okA, okB := r.applied("notice a", errs[0]), r.applied("notice b", errs[1])
		got, _ := r.received(0, p.ID)
		n := r.notice(id)
		switch {
		case okA == okB:
			t.Fatalf("one notice id, two amounts: %v", errs)
		case parcela.ErrorCode(errs[0])+parcela.ErrorCode(errs[1]) != parcela.EINVALID:
			t.Fatalf("the refusal: %v", errs)
		case okA && (got != a || n.PaidAmountCents != a), okB && (got != b || n.PaidAmountCents != b):
			t.Fatalf("received %d, notice %+v (a ok %v)", got, n, okA)
		}
		r.raceInvariants()

		// Another order's payment, under a new id, at once with this one.
		s := r.another() // the same company's: notice ids are per company and environment
		q := s.unpaid(0)
		id = "E2" + sqldbtest.Suffix()
		errs = race(r.settle(p.ID, id, 0), s.settle(q.ID, id, 0))
		okP, okQ := r.applied("notice p", errs[0]), r.applied("notice q", errs[1])
		if okP == okQ || parcela.ErrorCode(errs[0])+parcela.ErrorCode(errs[1]) != parcela.EINVALID {
			t.Fatalf("one notice id, two payments: %v", errs)
		}
		r.raceInvariants()
		s.raceInvariants()
		if paid := r.bill(0).Status == parcela.BillPaid; paid != okP || (s.bill(0).Status == parcela.BillPaid) != okQ {
			t.Fatalf("bills %s and %s, answered %v and %v", r.bill(0).Status, s.bill(0).Status, okP, okQ)
		}
	})
}

// another is a second order of the round's company, of the same offer,
// charged as newRound charges.
func (r *raceRound) another() *raceRound {
	r.t.Helper()
	s := *r
	offer, err := r.app.Catalog.Offer(r.ctx, r.a, r.order.OfferID)
	if err != nil {
		r.t.Fatal(err)
	}
	o, err := r.app.Orders.CreateOrder(r.ctx, r.a, fromJSON[parcela.OrderRequest](r.t, `{"order": {"offer_id": "`+offer.ID+`",
		"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
		"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
		"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
	if err != nil {
		r.t.Fatal(err)
	}
	if s.order, err = r.app.Orders.ChargeOrder(r.ctx, r.a, o.ID, r.chargeRequest(offer, 3)); err != nil {
		r.t.Fatal(err)
	}
	return &s
}

// applied tells a notice applied from one refused as naming another
// settlement; anything else fails the test.
func (r *raceRound) applied(what string, err error) bool {
	r.t.Helper()
	switch parcela.ErrorCode(err) {
	case "":
		return true
	case parcela.EINVALID:
		return false
	}
	r.t.Fatalf("%s: %v", what, err)
	return false
}

// lapsingAcquirer is the simulated acquirer that lets the first bill
// lapse while it decides: the clock passes the bill's due date and the
// lapse sweep runs.
type lapsingAcquirer struct {
	approvingAcquirer
	lapse func()
}

func (a *lapsingAcquirer) Authorize(ctx context.Context, req parcela.CardAuthorization) (parcela.CardDecision, error) {
	a.lapse()
	return a.approvingAcquirer.Authorize(ctx, req)
}

// A card approved while its first bill lapsed (the lapse sweep canceled
// the billing and order between the card's pricing and its approval):
// the approval is voided at the acquirer, the card answered 409, and the
// bill stays canceled with no paid payment.
func TestCardApprovedAfterItsBillLapsedIsVoided(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		acq := &lapsingAcquirer{}
		b.useAcquirer(acq)
		o := b.charge(3, parcela.MethodCreditCard)
		first := o.Billings[0].Bills[0]
		b.clock.Set(first.DueDate.Add(-time.Minute))
		acq.lapse = func() {
			b.clock.Set(first.DueDate.Add(time.Minute))
			if rep, err := b.app.Sweeps.Only(b.a.CompanyID).LapseFirstBills(b.ctx); err != nil || rep.Moved != 1 {
				t.Errorf("lapse: %+v %v", rep, err)
			}
		}
		_, err := b.payByCard(first, card("5555555555554444", "123"))
		wantCode(t, "card", err, parcela.EINVALIDSTATE)
		got := b.bill(first.ID)
		if got.Status != parcela.BillCanceled || len(acq.approved) != 1 || !slices.Equal(acq.voided, acq.approved) {
			t.Fatalf("bill %s; approved %v, voided %v", got.Status, acq.approved, acq.voided)
		}
		for _, p := range got.Payments {
			if p.Status == parcela.PaymentPaid {
				t.Fatalf("a %s payment paid on a lapsed bill", p.Method)
			}
		}
	})
}

// The issue sweeps of two instances while the company's next order is
// charged and a charged order's down payment is settled (activating its
// billing): no sweep fails, the charge and the settlement succeed, and
// every installment has one boleto at most.
func TestRaceIssueSweepsAndCharge(t *testing.T) {
	eachRace(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		s := r.another()
		offer, err := r.app.Catalog.Offer(r.ctx, r.a, r.order.OfferID)
		if err != nil {
			t.Fatal(err)
		}
		o, err := r.app.Orders.CreateOrder(r.ctx, r.a, fromJSON[parcela.OrderRequest](t, `{"order": {"offer_id": "`+offer.ID+`",
			"customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17", "customer_document": "52998224725",
			"email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100", "street": "Avenida Paulista",
			"number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.app.Payments.PayPayment(r.ctx, r.a, r.unpaid(0).ID, parcela.Settlement{}); err != nil {
			t.Fatal(err)
		}
		bills := r.state().Billings[0].Bills
		r.clock.Set(bills[len(bills)-1].DueDate.AddDate(0, 0, -5))
		down := s.unpaid(0)
		sweeps := r.app.Sweeps.Only(r.a.CompanyID)
		other := sqldbtest.Services(db, r.clock).Sweeps.Only(r.a.CompanyID)
		var reps [2]parcela.SweepReport
		errs := race(
			func() (err error) { reps[0], err = sweeps.IssueDueInstallments(r.ctx); return err },
			func() (err error) { reps[1], err = other.IssueDueInstallments(r.ctx); return err },
			func() error {
				_, err := r.app.Orders.ChargeOrder(r.ctx, r.a, o.ID, r.chargeRequest(offer, 3))
				return err
			},
			func() error {
				_, _, err := r.app.Payments.PayPayment(r.ctx, r.a, down.ID, parcela.Settlement{PaidAt: &raceStart})
				return err
			},
		)
		for _, err := range errs {
			if err != nil {
				t.Fatalf("%v", errs)
			}
		}
		if len(reps[0].Failed)+len(reps[1].Failed) > 0 {
			t.Fatalf("sweeps failed: %+v %+v", reps[0], reps[1])
		}
		charged := &raceRound{t: t, ctx: r.ctx, db: db, clock: r.clock, app: r.app, a: r.a, order: o}
		for _, x := range []*raceRound{r, s, charged} {
			x.raceInvariants()
		}
		if n := reps[0].Moved + reps[1].Moved; n < len(bills)-1 {
			t.Fatalf("the sweeps issued %d boletos, want the first order's %d at least", n, len(bills)-1)
		}
		if got := charged.state(); got.Status != parcela.OrderInProgress || len(got.Billings) != 1 {
			t.Fatalf("the charged order: %s with %d billings", got.Status, len(got.Billings))
		}
		r.noIntentInFlight()
	})
}
