package parcela

import (
	"context"
	"time"
)

// Billings reads and cancels billings.
type Billings struct {
	store OrderStore
	clock Clock
	links PublicLinks
}

// NewBillings returns the billing use cases.
func NewBillings(store OrderStore, clock Clock, links PublicLinks) *Billings {
	return &Billings{store: store, clock: clock, links: links}
}

var _ BillingService = (*Billings)(nil)

// Billing returns one of the caller's billings.
func (s *Billings) Billing(ctx context.Context, a Auth, id string) (*Billing, error) {
	return s.store.Billing(ctx, a, id)
}

// CancelBilling cancels an open billing and, since an order cannot be
// finished without it, the order too, with the same reason.
func (s *Billings) CancelBilling(ctx context.Context, a Auth, id, reason string) (*Billing, error) {
	var canceled *Billing
	err := decideAndApply("billing", func() error {
		b, err := s.store.Billing(ctx, a, id)
		if err != nil {
			return err
		}
		o, err := s.store.Order(ctx, a, b.OrderID)
		if err != nil {
			return err
		}
		o.linkBills()
		if b = o.findBilling(id); b == nil {
			return &Conflict{Entity: "billing", ID: id}
		}
		m := newMover(a, s.clock.Now(), s.links.Links(a.Environment))
		if err := m.cancelBillingAndOrder(o, b, reason, o.Offer.Product.Company); err != nil {
			return err
		}
		canceled = b
		return s.store.Apply(answering(ctx, b), m.change())
	})
	if err != nil {
		return nil, err
	}
	return canceled, nil
}

// Bills reads bills and waives their penalties.
type Bills struct {
	store    BillStore
	payments *Payments // issues a waived bill's payment on its new terms
	clock    Clock
	links    PublicLinks
}

// NewBills returns the bill use cases. payments, when not nil, issues the
// payment of a bill whose waiver canceled the one it had.
func NewBills(store BillStore, payments *Payments, clock Clock, links PublicLinks) *Bills {
	return &Bills{store: store, payments: payments, clock: clock, links: links}
}

var _ BillService = (*Bills)(nil)

// Bill returns one of the caller's bills with its payments and billing
// summary, and the company whose rates and payment expiry price what it
// owes.
func (s *Bills) Bill(ctx context.Context, a Auth, id string) (*Bill, *Company, error) {
	return s.store.Bill(ctx, a, id)
}

// Bills returns a page of the caller's bills ordered by due date, and the
// total count. A filter on an id that no bill can have (not a UUID) finds
// nothing without a query.
func (s *Bills) Bills(ctx context.Context, a Auth, f BillFilter) ([]*Bill, int, *Company, error) {
	if err := f.Validate(); err != nil {
		return nil, 0, nil, err
	}
	if f.MatchesNothing() {
		return []*Bill{}, 0, nil, nil
	}
	return s.store.Bills(ctx, a, f)
}

// waiverIssueTimeout bounds the boleto a waiver issues after its commit:
// one call to the provider and the change that stores it.
const waiverIssueTimeout = issueTimeout + 10*time.Second

// WaivePenalties sets (or, with nil, clears) the instant until which an
// open bill carries no late penalties, and settles what that changes
// (mover.waive): a live Pix or boleto priced with a penalty waived is
// canceled, and a bill whose payments received what it now owes is paid.
// A bill left with no live payment by the waiver is issued its boleto on
// the new terms at once, so the payer has one to pay with; when the
// provider fails, the waiver stands and the issue sweep issues it.
func (s *Bills) WaivePenalties(ctx context.Context, a Auth, id string, until *time.Time) (*Bill, *Company, error) {
	// To the millisecond it is stored with, as an offer's expiry: checked
	// uncut, 9999-12-31T23:59:59.9991 was too large, where an offer took it.
	until = toMillisecond(until)
	var v Validation
	if checkInstant(&v, "bill.disable_penalties_until", until); v.Err() != nil {
		return nil, nil, v.Err()
	}
	canceled := false
	err := decideAndApply("bill", func() error {
		found, _, err := s.store.Bill(ctx, a, id)
		if err != nil {
			return err
		}
		if !found.open() {
			return Errorf(EINVALIDSTATE, "bill is %s; penalties can only be waived on a pending or overdue bill", found.Status)
		}
		// Read with its order: a waiver that pays the bill moves its
		// billing and order on.
		o, err := s.store.Order(ctx, a, found.OrderID)
		if err != nil {
			return err
		}
		o.linkBills()
		b, bill := o.findBill(id)
		if bill == nil || !bill.open() {
			return &Conflict{Entity: "bill", ID: id}
		}
		m := newMover(a, s.clock.Now(), s.links.Links(a.Environment))
		if err := m.waive(o, b, bill, o.Offer.Product.Company, until); err != nil {
			return err
		}
		ch := m.change()
		// Past the limit the issue sweep issues it: a waiver set again and
		// again issued a boleto each time.
		canceled = bill.open() && ch != nil && len(ch.Voids) > 0 && !bill.requestIssueLimited(m.c.At)
		return s.store.Apply(ctx, ch)
	})
	if err != nil {
		return nil, nil, err
	}
	if canceled && s.payments != nil {
		// Best effort: a failure leaves the bill to the issue sweep, as a
		// bill issued RequestIssuePaymentLimit payments in a day is. The
		// waiver's write claimed the request's Idempotency-Key; the
		// boleto's writes are no claim of it again. Its client leaving
		// does not stop it: the waiver committed, and its retry, which
		// cancels nothing, would issue nothing, so the bill stayed with
		// nothing to pay with until the issue sweep.
		issue, cancel := context.WithTimeout(context.WithoutCancel(withoutIdempotentRequest(ctx)), waiverIssueTimeout)
		_, _ = s.payments.issueInstallment(issue, a, id, false)
		cancel()
	}
	return s.store.Bill(ctx, a, id)
}
