package parcela

import (
	"context"
	"time"
)

// Payments settles and expires payments as the bank reports them, and
// issues installment boletos.
type Payments struct {
	store  PaymentStore
	issuer *issuer
	clock  Clock
	links  PublicLinks
}

// NewPayments returns the payment use cases. provider issues installment
// boletos.
func NewPayments(store PaymentStore, provider PaymentProvider, clock Clock, links PublicLinks) *Payments {
	return &Payments{store: store, issuer: &issuer{intents: store, provider: provider, clock: clock}, clock: clock, links: links}
}

var _ PaymentService = (*Payments)(nil)

// PayPayment settles a payment as the bank would: the payment and its bill
// become paid, the bill's other open payments are canceled, and the billing
// and order move on (the first bill activates a financed billing and
// finishes an upfront one; the last bill finishes both). A settlement below
// the payment's amount is recorded on it and pays nothing (mover.pay).
// Paying a paid payment again changes nothing and writes no event.
//
// A notice with the bank's id (NoticeID) is applied once: the same id
// again, for the same settlement, changes nothing and answers the bill as
// it stands (a partial settlement delivered twice was counted twice); for
// another settlement it is refused. A new notice of a payment already
// paid is refused too, not taken for a replay: its money reaches no open
// payment.
func (s *Payments) PayPayment(ctx context.Context, a Auth, id string, settle Settlement) (*Bill, *Company, error) {
	if settle.NoticeID != "" {
		if err := checkNoticeID(settle.NoticeID); err != nil {
			return nil, nil, err
		}
	}
	var paid PricedBill
	err := decideAndApply("payment", func() error {
		o, err := s.store.OrderOfPayment(ctx, a, id)
		if err != nil {
			return err
		}
		o.linkBills()
		b, bill, p := o.findPayment(id)
		if p == nil {
			return &Conflict{Entity: "payment", ID: id}
		}
		paid = PricedBill{Bill: bill, Company: o.Offer.Product.Company}
		if settle.NoticeID != "" {
			// Read after the order: a notice committed since is seen, or
			// the change it made moves the billing this one is guarded by.
			n, err := s.store.SettlementNotice(ctx, a, settle.NoticeID)
			if err == nil {
				return n.replays(id, settle)
			} else if ErrorCode(err) != ENOTFOUND {
				return err
			}
		}
		switch p.Status {
		case PaymentPaid:
			if settle.NoticeID != "" {
				return Errorf(EINVALIDSTATE, "payment is paid; notice %s is another settlement, whose money reaches no open payment", settle.NoticeID)
			}
			return nil
		case PaymentUnpaid:
		case PaymentCanceled, PaymentExpired:
			// The bank took money on the code before it was voided, or
			// before it expired, and notifies it after: a waiver canceled
			// the late boleto its payer had just paid, or an installment's
			// boleto paid on its grace's last day was expired by the sweep
			// before the notice came. The money reaches the bill while it
			// is open (below); dated before expires_at (checkSettlement).
			if p.Method == MethodCreditCard || settle.PaidAt == nil {
				return Errorf(EINVALIDSTATE, "payment is %s; only an unpaid payment can be paid, or a canceled or expired boleto or Pix by a bank's notice with its paid_at", p.Status)
			}
		default:
			return Errorf(EINVALIDSTATE, "payment is %s; only an unpaid payment can be paid", p.Status)
		}
		if !bill.open() {
			return Errorf(EINVALIDSTATE, "bill is %s; it cannot be paid", bill.Status)
		}
		m := newMover(a, s.clock.Now(), s.links.Links(a.Environment))
		received := p.PaidAmountCents
		if err := m.pay(o, b, bill, p, o.Offer.Product.Company, settle); err != nil {
			return err
		}
		c := m.change()
		if settle.NoticeID != "" {
			// The notice's own paid_at: the payment's is its latest
			// settlement's, which may be another notice's.
			c.Notice = &SettlementNotice{ID: settle.NoticeID, CompanyID: a.CompanyID, Environment: a.Environment, PaymentID: p.ID,
				PaidAmountCents: p.PaidAmountCents - received, PaidAt: settle.at(c.At), CreatedAt: c.At}
		}
		return s.store.Apply(answering(ctx, paid), c)
	})
	if err != nil {
		return nil, nil, err
	}
	return paid.Bill, paid.Company, nil
}

// ExpirePayment expires an unpaid payment, the sandbox playing the bank.
// An expired down payment cancels its billing (down_payment_not_paid) and
// order (expired); an expired installment boleto is re-issued and its bill
// stays open, refused once the bill was issued RequestIssuePaymentLimit
// payments in a day (requestIssueLimited).
func (s *Payments) ExpirePayment(ctx context.Context, a Auth, id string) (*Bill, *Company, error) {
	expired, err := s.expire(ctx, a, id, true)
	if err != nil {
		return nil, nil, err
	}
	return expired.Bill, expired.Company, nil
}

// RequestIssuePaymentLimit is how many payments a bill may have been
// issued in the last RequestIssueWindow for a request to have it issued
// another at once: the sandbox's expire of an installment's payment
// (refused past it) and a waiver that canceled the bill's live payment
// (past it, the issue sweep issues the next, within ten minutes). Each
// such expiry, and each waiver set again, issued another; every answer of
// the bill and every page of bills lists them all, and one token grew one
// bill by 90,000 payments an hour at the sandbox's rate limit, its GET by
// about 1 KB each (an audit). Counted over the bill's life, the limit was
// reached by time alone (a boleto re-issued every 72 hours, five refused
// cards a day), and a seller's first waiver of a long-overdue bill left it
// nothing to pay with (a review); a day holds far fewer of those.
const (
	RequestIssuePaymentLimit = 20
	RequestIssueWindow       = 24 * time.Hour
)

// requestIssueLimited tells whether bill was issued RequestIssuePaymentLimit
// payments in the RequestIssueWindow to now.
func (b *Bill) requestIssueLimited(now time.Time) bool {
	n := 0
	for _, p := range b.Payments {
		if p.CreatedAt.After(now.Add(-RequestIssueWindow)) {
			n++
		}
	}
	return n >= RequestIssuePaymentLimit
}

// expire expires a payment and returns its bill as the change left it. An
// installment that stays open gets its next boleto in the same change when
// the provider issues it; when the provider fails, the expiry stands alone
// and the installment sweep issues the boleto later (recording the
// failure), so a provider's failure never holds an expiry back. Limited
// (the sandbox's), an installment issued too many payments in a day is
// refused (requestIssueLimited).
func (s *Payments) expire(ctx context.Context, a Auth, id string, limited bool) (expired PricedBill, err error) {
	err = decideAndApply("payment", func() error {
		o, err := s.store.OrderOfPayment(ctx, a, id)
		if err != nil {
			return err
		}
		o.linkBills()
		b, bill, p := o.findPayment(id)
		if p == nil {
			return &Conflict{Entity: "payment", ID: id}
		}
		now := s.clock.Now()
		// Only an installment's expiry issues another (a first bill's
		// lapses its order).
		if limited && bill.Type == BillTypeInstallment && p.Status == PaymentUnpaid && bill.requestIssueLimited(now) {
			return Errorf(EINVALIDSTATE, "the bill was issued %d payments in the last 24 hours, the most for which the sandbox expires one: each expiry of an installment's payment issues another, and every answer of the bill lists them all; test further on another order, or a day later", RequestIssuePaymentLimit)
		}
		c := o.Offer.Product.Company
		expired = PricedBill{Bill: bill, Company: c}
		m := newMover(a, now, s.links.Links(a.Environment))
		reissue, err := m.expire(o, b, bill, p, c)
		if err != nil {
			return err
		}
		var fresh *Payment
		if reissue && b.Status == BillingActive {
			if fresh, err = s.issuer.issue(ctx, installmentPayment(c, b.PaymentConfiguration, bill, now)); err == nil {
				m.c.NewPayments = append(m.c.NewPayments, fresh)
				bill.Payments = append(bill.Payments, fresh)
			}
		}
		if err := s.store.Apply(answering(ctx, expired), m.change()); err != nil {
			if fresh != nil {
				s.issuer.abandon(ctx, fresh)
			}
			return err
		}
		return nil
	})
	return expired, err
}

// issueInstallment issues the boleto of an installment bill that needs one
// (open, in an active billing, without a live payment), deciding on a
// fresh read; the billing, read first, guards the decision, as its version
// moves with any change of its bills and payments. It reports whether it
// issued.
func (s *Payments) issueInstallment(ctx context.Context, a Auth, billID string, windowed bool) (issued bool, err error) {
	err = decideAndApply("bill", func() error {
		issued = false
		found, _, err := s.store.Bill(ctx, a, billID)
		if err != nil {
			return err
		}
		billing, err := s.store.Billing(ctx, a, found.BillingID)
		if err != nil {
			return err
		}
		var bill *Bill
		for _, b := range billing.Bills {
			if b.ID == billID {
				bill, b.Billing = b, billing
			}
		}
		if bill == nil || !bill.needsPayment() || billing.Status != BillingActive {
			return nil
		}
		c, err := s.store.Company(ctx, a.CompanyID)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		if windowed && !c.InIssueWindow(bill.DueDate, now) {
			return nil // selected in the store's hour of slack (InstallmentsToIssue)
		}
		p, err := s.issuer.issue(ctx, installmentPayment(c, billing.PaymentConfiguration, bill, now))
		if err != nil {
			return err
		}
		m := newMover(a, now, s.links.Links(a.Environment))
		m.guardBilling(billing)
		m.c.NewPayments = []*Payment{p}
		if err := s.store.Apply(ctx, m.change()); err != nil {
			s.issuer.abandon(ctx, p)
			return err
		}
		issued = true
		return nil
	})
	return issued, err
}

// needsPayment tells whether an open installment has no live (unpaid or
// paid) payment.
func (b *Bill) needsPayment() bool {
	if !b.open() || b.Type != BillTypeInstallment {
		return false
	}
	for _, p := range b.Payments {
		if p.Status == PaymentUnpaid || p.Status == PaymentPaid {
			return false
		}
	}
	return true
}

// PublicPayment finds a payment of env by its unguessable id alone. An id
// that is no UUID is not found without a query: a page's path may carry
// any bytes, and PostgreSQL fails a query given text that is not UTF-8.
func (s *Payments) PublicPayment(ctx context.Context, env Environment, id string) (*Payment, error) {
	if !IsUUID(id) {
		return nil, NotFound("payment")
	}
	return s.store.PublicPayment(ctx, env, LowerUUID(id))
}

// PaymentForPayer finds a payment of env by its unguessable id, with its
// bill (the payment as one of the bill's) and its company, the seller
// the page names, whose rates price the bill's penalties: its page shows what paying it takes as the
// bill's checkout does, a boleto past its due date with the fine and
// interest its barcode then takes, which it showed at its bare amount.
func (s *Payments) PaymentForPayer(ctx context.Context, env Environment, id string) (*Payment, *Bill, *Company, error) {
	p, err := s.PublicPayment(ctx, env, id)
	if err != nil {
		return nil, nil, nil, err
	}
	b, _, err := s.store.Bill(ctx, Auth{CompanyID: p.CompanyID, Environment: env}, p.BillID)
	if err != nil {
		return nil, nil, nil, err
	}
	// The whole company, not Bill's rates alone: the page names the
	// seller (its name, document and palette) as the checkout does.
	c, err := s.store.Company(ctx, p.CompanyID)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, bp := range b.Payments {
		if bp.ID == p.ID {
			return bp, b, c, nil
		}
	}
	return nil, nil, nil, NotFound("payment")
}
