package parcela

import (
	"math"
	"strconv"
	"time"

	"parcela/brcode"
)

// The decisions that move a billing, its bills and payments, and its order.
// Each works on entities read together (an order with its billings, bills
// and payments, or one bill with its billing summary), moves them in memory
// through a mover, and renders every event from them as they stand at that
// point, so an event's data is what a GET would have shown.

// open tells whether a bill still waits for its money.
func (b *Bill) open() bool { return b.Status == BillPending || b.Status == BillOverdue }

// Open tells whether a billing can still move on (waiting_payment or active).
func (b *Billing) Open() bool {
	return b.Status == BillingWaitingPayment || b.Status == BillingActive
}

// findPayment finds a payment of the order with its bill and billing.
func (o *Order) findPayment(id string) (*Billing, *Bill, *Payment) {
	for _, b := range o.Billings {
		for _, bill := range b.Bills {
			for _, p := range bill.Payments {
				if p.ID == id {
					return b, bill, p
				}
			}
		}
	}
	return nil, nil, nil
}

// findBill finds a bill of the order with its billing.
func (o *Order) findBill(id string) (*Billing, *Bill) {
	for _, b := range o.Billings {
		for _, bill := range b.Bills {
			if bill.ID == id {
				return b, bill
			}
		}
	}
	return nil, nil
}

func (o *Order) findBilling(id string) *Billing {
	for _, b := range o.Billings {
		if b.ID == id {
			return b
		}
	}
	return nil
}

// linkBills points every bill of the order at its billing, as the bill
// forms show it.
func (o *Order) linkBills() {
	for _, b := range o.Billings {
		for _, bill := range b.Bills {
			bill.Billing = b
		}
	}
}

// at is the instant s was paid at: its paid_at, to the millisecond it is
// stored with as the clock's instants are (paid at 23:59:59.9995 is paid
// at the due instant, on time), or now.
func (s Settlement) at(now time.Time) time.Time {
	if s.PaidAt != nil {
		return s.PaidAt.Truncate(time.Millisecond)
	}
	return now
}

// pay settles payment p of bill with s, the bank's notice. The amount
// received adds to what the payment received before; once that reaches the
// payment's amount, the payment and the bill become paid, the bill's other
// unpaid payments are canceled, and the billing and order move on
// (advance). Less than that is recorded on the payment, which stays unpaid,
// and the bill stays open.
//
// Without an amount, the bank paid what is still due (Bill.takesAt, what
// the pages show it taking): the payment's amount less what it received,
// or, paid after the payment's own due date (payableUntil) and when more,
// what the bill owes at paid_at (a late payment carries its fine and
// interest).
func (m *mover) pay(o *Order, b *Billing, bill *Bill, p *Payment, c *Company, s Settlement) error {
	paidAt := s.at(m.c.At)
	if s.PaidAt == nil && !p.settlesAt(paidAt) {
		// Expired, though no sweep has moved it yet: as if it had.
		return Errorf(EINVALIDSTATE, "payment expired at %s; only an unpaid payment can be paid", p.ExpiresAt.In(SaoPaulo).Format(TimestampLayout))
	}
	amount := bill.takesAt(p, paidAt, c) // paid late, the bank collected the bill's fine and interest too
	if s.PaidAmountCents != nil {
		amount = *s.PaidAmountCents
		if amount > MaxAmountCents {
			// A settlement sent is one boleto or Pix's amount.
			var v Validation
			checkAmount(&v, "paid_amount_cents", amount, 1)
			return v.Err()
		}
	}
	if err := checkSettlement(p, paidAt, amount, m.c.At); err != nil {
		return err
	}
	m.guardBilling(b)
	// The bill is paid by the settlement that brings what its payments
	// received to what it owes, though this payment received less than
	// its own amount: a Pix and a boleto issued for one bill, each paid in
	// part, would otherwise leave it open owing nothing. What it owes is
	// measured as this payment's amount was (owedBy): the two, summing to
	// what the boleto asked, paid on the business day its weekend due
	// date moved to, left it open owing that day's interest, where the
	// boleto alone paid it.
	//
	// What they received together is measured when it was all in: at the
	// latest paid_at of the settlements that make it up (every payment's
	// that Received counts, an expired one's too), as the payment settled
	// then measures it (owedBy: its amount carries the penalty to the day
	// it is priced for), not as this notice does: banks send notices in
	// any order. Else two parts of a late bill, the later-dated one's
	// notice first, paid it as of the earlier date, when it owed less; in
	// date order the same two parts leave it open owing the days between.
	together, last := bill.lastReceived(c, paidAt, p)
	own := paidAt // a payment's paid_at is its latest settlement's
	if p.PaidAmountCents > 0 && p.PaidAt != nil && p.PaidAt.After(own) {
		own = *p.PaidAt
	}
	p.PaidAmountCents += amount
	p.PaidAt = &own
	if p.PaidAmountCents < p.AmountCents && bill.owedBy(last, together, c) > 0 {
		m.touchPayment(p)
		return nil
	}
	if err := m.movePayment(p, PaymentPaid); err != nil {
		return err
	}
	if err := m.closePayments(bill); err != nil {
		return err
	}
	if err := m.moveBill(bill, BillPaid); err != nil {
		return err
	}
	// Paid by this payment's amount, when it was; else by the money in.
	if p.PaidAmountCents >= p.AmountCents {
		together = own
	}
	bill.PaidAt = &together
	return m.paidBill(o, b, bill, c)
}

// closePayments closes the unpaid payments of a bill being paid: one that
// received part of it is paid (for what it received, which paid the bill
// too, or paid it over for the seller to refund), never canceled as if
// nothing had reached it; the others are canceled. Either way its code,
// still payable at the bank, is voided there (movePayment).
func (m *mover) closePayments(bill *Bill) error {
	for _, q := range bill.Payments {
		if q.Status != PaymentUnpaid {
			continue
		}
		to := PaymentCanceled
		if q.PaidAmountCents > 0 {
			to = PaymentPaid
		}
		if err := m.movePayment(q, to); err != nil {
			return err
		}
	}
	return nil
}

// waive sets open bill's penalty waiver (until; nil clears it) and
// settles what that changes. A bill whose payments received what it now
// owes is paid: a payment that received part of it is paid, the other
// unpaid ones canceled, as a settlement reaching it would have (pay). Else
// a live Pix or boleto whose amount carries a penalty the waiver takes
// back (the bill's penalty at the instant it was priced for is now less)
// is canceled (voided at the provider), where the payer would have paid
// the penalty waived, and the bill is issued one on its new terms
// (Bills.WaivePenalties, or the issue sweep). One priced without it stays,
// whatever another payment received meanwhile: a boleto of the original
// amount was canceled because a Pix beside it had received part of the
// bill, and the Pix then kept the bill from being issued another.
func (m *mover) waive(o *Order, b *Billing, bill *Bill, c *Company, until *time.Time) error {
	m.touchBill(bill)
	type priced struct {
		p     *Payment
		at    time.Time
		total int64
	}
	var live []priced
	for _, p := range bill.Payments {
		if p.Status == PaymentUnpaid && p.Method != MethodCreditCard {
			at := bill.pricedAt(p, c)
			live = append(live, priced{p, at, bill.penaltyAt(at, c).Total(bill.AmountCents)})
		}
	}
	bill.DisablePenaltiesUntil = until
	if bill.owed(m.c.At, c) > 0 {
		for _, l := range live {
			if bill.penaltyAt(l.at, c).Total(bill.AmountCents) < l.total {
				if err := m.movePayment(l.p, PaymentCanceled); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := m.closePayments(bill); err != nil {
		return err
	}
	if err := m.moveBill(bill, BillPaid); err != nil {
		return err
	}
	at := m.c.At
	bill.PaidAt = &at
	return m.paidBill(o, b, bill, c)
}

// lastReceived is when what bill's payments received (Received) was all
// in, and the payment settled then: the latest paid_at among the payments
// Received counts, starting from at and by (a settlement being applied),
// nil when none received anything. Of payments settled at one instant,
// the one priced for the earliest day is taken, whatever the order their
// notices came in: its amount pays the bill through its expiry, and the
// bill's payments together pay it as it does (owedBy).
func (b *Bill) lastReceived(c *Company, at time.Time, by *Payment) (time.Time, *Payment) {
	for _, q := range b.Payments {
		if q.Status == PaymentPaid || q.PaidAmountCents <= 0 || q.PaidAt == nil {
			continue
		}
		if by == nil || q.PaidAt.After(at) || q.PaidAt.Equal(at) && b.pricedAt(q, c).Before(b.pricedAt(by, c)) {
			at, by = *q.PaidAt, q
		}
	}
	return at, by
}

// PixNoticeGrace is how long after its expires_at an unpaid Pix waits for
// the bank's notice before the expiry sweep expires it: a Pix paid in its
// last second is notified after it, and a notice that found it expired
// was refused, the payer's money in no record. A boleto's expires_at
// already holds its grace (BoletoExpiry). Paid at or after expires_at is
// still refused (settlesAt), whenever the notice comes.
const PixNoticeGrace = time.Hour

// settlesAt tells whether money paid at t can settle p: a Pix or boleto
// only before its expires_at (the bank takes nothing for it from then,
// whether or not the expiry sweep has moved it yet); a card attempt is
// settled as it is made, the instant it expires.
func (p *Payment) settlesAt(t time.Time) bool {
	return p.Method == MethodCreditCard || t.Before(p.ExpiresAt)
}

// payableUntil is the last instant p is paid for its own amount: a Pix's
// expiry; a boleto's due date (the one it carries) moved to the next
// business day, as a bank takes a boleto due on a weekend or holiday for
// its amount on the next day it opens, and only later with the late
// charges. Zero for a boleto whose due date cannot be read.
func (p *Payment) payableUntil() time.Time {
	if p.Method != MethodBoleto {
		return p.ExpiresAt
	}
	due := p.BoletoDueDate()
	if due.IsZero() {
		return due
	}
	return BoletoPayableUntil(due)
}

// BoletoDueDate is the due date a boleto's linha digitável carries (the
// due factor after the general check digit): the date the bank holds it
// to, not its bill's (a boleto re-issued for a late installment is due
// days later) nor its expiry (the end of the settlement grace, when paying
// is already late). Zero for a payment without a linha.
func (p *Payment) BoletoDueDate() time.Time {
	if p.Method != MethodBoleto || p.Barcode == nil || len(*p.Barcode) != 47 {
		return time.Time{}
	}
	factor, err := strconv.Atoi((*p.Barcode)[33:37])
	if err != nil {
		return time.Time{}
	}
	return brcode.DueDateFromFactor(factor, p.CreatedAt.In(SaoPaulo))
}

// checkSettlement refuses a settlement that cannot have happened: paid
// before the payment was issued, once it had expired or after now, or of
// no money. A bound is named to the millisecond it is kept with: in whole
// seconds, paid_at at the issue instant named was refused.
func checkSettlement(p *Payment, paidAt time.Time, amount int64, now time.Time) error {
	var v Validation
	switch {
	case !validOffset(paidAt):
		v.Add("paid_at", "invalid", offsetMessage)
	case paidAt.Before(p.CreatedAt):
		v.Add("paid_at", "invalid", "must not be before the payment was issued ("+p.CreatedAt.In(SaoPaulo).Format(TimestampLayout)+")")
	case !p.settlesAt(paidAt):
		v.Add("paid_at", "invalid", "must be before the payment expired ("+p.ExpiresAt.In(SaoPaulo).Format(TimestampLayout)+")")
	case paidAt.After(now):
		v.Add("paid_at", "invalid", "must not be in the future")
	}
	switch {
	case amount <= 0:
		v.Add("paid_amount_cents", "too_small", "must be greater than 0")
	case amount > math.MaxInt64-p.PaidAmountCents:
		v.Add("paid_amount_cents", "too_large", "is more than a payment can receive")
	}
	return v.Err()
}

// advance moves a billing (and its order) after one of its bills was paid:
// the first paid bill activates a financed billing, the last one finishes
// the billing and the order. An upfront billing finishes at once.
func (m *mover) advance(o *Order, b *Billing) error {
	open := 0
	for _, bill := range b.Bills {
		if bill.open() {
			open++
		}
	}
	if b.Status == BillingWaitingPayment && (open > 0 || b.Installments > 1) {
		if err := m.moveBilling(b, BillingActive); err != nil {
			return err
		}
		if err := m.billingEvent(b, BillingActive); err != nil {
			return err
		}
	}
	if open > 0 {
		return nil
	}
	if err := m.moveBilling(b, BillingFinished); err != nil {
		return err
	}
	at := m.c.At
	b.FinishedAt = &at
	if err := m.billingEvent(b, BillingFinished); err != nil {
		return err
	}
	if o.Status != OrderInProgress {
		return nil
	}
	if err := m.moveOrder(o, OrderFinished); err != nil {
		return err
	}
	return m.orderEvent(o, OrderFinished)
}

// expire expires unpaid payment p. An expired down payment of a billing
// still waiting for it cancels the billing (down_payment_not_paid) and the
// order (expired). It reports whether the bill stays open and needs a
// fresh payment: an expired installment boleto is re-issued.
func (m *mover) expire(o *Order, b *Billing, bill *Bill, p *Payment, c *Company) (reissue bool, err error) {
	if p.Status != PaymentUnpaid {
		return false, Errorf(EINVALIDSTATE, "payment is %s; only an unpaid payment can expire", p.Status)
	}
	m.guardBilling(b)
	if err := m.movePayment(p, PaymentExpired); err != nil {
		return false, err
	}
	if !bill.open() || bill.otherLivePayment(p, m.c.At) != nil {
		// Another payment (one the payer issued on the checkout) still
		// pays the bill: nothing else moves.
		return false, nil
	}
	if bill.Type != BillTypeDownPayment || b.Status != BillingWaitingPayment {
		return true, nil
	}
	return false, m.lapse(o, b, c)
}

// otherLivePayment is an unpaid payment of the bill other than p that may
// still settle it at now, or nil: one not expired, a Pix within the
// hour its expiry sweep leaves it for the bank's notice (PixNoticeGrace),
// or a first bill's boleto before its notice has surely come
// (BoletoNoticeDeadline).
// A boleto expiring in that hour lapsed the bill's order, or issued a
// second payment beside the Pix, and the notice of a Pix paid on time
// then found it canceled: the payer's money on no record.
func (b *Bill) otherLivePayment(p *Payment, now time.Time) *Payment {
	for _, q := range b.Payments {
		if q == p || q.Status != PaymentUnpaid {
			continue
		}
		until := q.ExpiresAt
		switch {
		case q.Method == MethodPix:
			until = until.Add(PixNoticeGrace)
		case q.Method == MethodBoleto && b.Type == BillTypeDownPayment:
			until = BoletoNoticeDeadline(until)
		}
		if now.Before(until) {
			return q
		}
	}
	return nil
}

// lapse ends a billing whose first bill went unpaid past its time: the
// billing is canceled (down_payment_not_paid) and its order too (expired).
func (m *mover) lapse(o *Order, b *Billing, c *Company) error {
	if err := m.cancelBilling(b, "down_payment_not_paid", c); err != nil {
		return err
	}
	if o.Status != OrderInProgress {
		return nil
	}
	if err := m.moveOrder(o, OrderCanceled); err != nil {
		return err
	}
	reason := ReasonExpired
	o.CancelationReason = &reason
	return m.orderEvent(o, OrderCanceled)
}

// cancelBilling cancels an open billing, its open bills and their unpaid
// payments; paid bills stay paid.
func (m *mover) cancelBilling(b *Billing, reason string, c *Company) error {
	if !b.Open() {
		return Errorf(EINVALIDSTATE, "billing is %s; only waiting_payment or active billings can be canceled", b.Status)
	}
	if err := m.moveBilling(b, BillingCanceled); err != nil {
		return err
	}
	b.CancelationReason = &reason
	var canceled []*Bill
	for _, bill := range b.Bills {
		if !bill.open() {
			continue
		}
		for _, p := range bill.Payments {
			if p.Status == PaymentUnpaid {
				if err := m.movePayment(p, PaymentCanceled); err != nil {
					return err
				}
			}
		}
		if err := m.moveBill(bill, BillCanceled); err != nil {
			return err
		}
		canceled = append(canceled, bill)
	}
	for _, bill := range canceled {
		if err := m.billEvent(bill, c, BillCanceled); err != nil {
			return err
		}
	}
	return m.billingEvent(b, BillingCanceled)
}

// cancelOrder cancels a pending or in-progress order, and with it its open
// billings.
func (m *mover) cancelOrder(o *Order, reason string, c *Company) error {
	if o.Status != OrderPending && o.Status != OrderInProgress {
		return Errorf(EINVALIDSTATE, "order is %s; only pending or in_progress orders can be canceled", o.Status)
	}
	if err := m.moveOrder(o, OrderCanceled); err != nil {
		return err
	}
	o.CancelationReason = &reason
	billingReason := reason
	if reason == ReasonExpired {
		billingReason = "down_payment_not_paid"
	}
	for _, b := range o.Billings {
		if b.Open() {
			if err := m.cancelBilling(b, billingReason, c); err != nil {
				return err
			}
		}
	}
	return m.orderEvent(o, OrderCanceled)
}

// cancelBillingAndOrder cancels a billing and, since an order cannot finish
// without it, its order too, with the same reason.
func (m *mover) cancelBillingAndOrder(o *Order, b *Billing, reason string, c *Company) error {
	if err := m.cancelBilling(b, reason, c); err != nil {
		return err
	}
	if o.Status != OrderPending && o.Status != OrderInProgress {
		return nil
	}
	if err := m.moveOrder(o, OrderCanceled); err != nil {
		return err
	}
	o.CancelationReason = &reason
	return m.orderEvent(o, OrderCanceled)
}

// markOverdue moves an installment to overdue once it is late (lateFrom)
// with a live payment, in an active billing: a bill the payer has nothing
// to pay with, or whose billing still waits for its down payment, is not
// late. Down payments expire instead. It reports whether it moved.
func (m *mover) markOverdue(bill *Bill, c *Company) (bool, error) {
	// Late only past its waiver too: a bill waived to a later day turned
	// overdue at its due date, and its seller's integration dunned a payer
	// inside the extension it had granted (an audit).
	through, _ := bill.PenaltyFreeThrough()
	if bill.Status != BillPending || bill.Type != BillTypeInstallment || bill.Billing.Status != BillingActive ||
		bill.unpaidPayment() == nil || !m.c.At.After(through) {
		return false, nil
	}
	if err := m.moveBill(bill, BillOverdue); err != nil {
		return false, err
	}
	return true, m.billEvent(bill, c, BillOverdue)
}
