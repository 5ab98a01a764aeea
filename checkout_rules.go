package parcela

import (
	"context"
	"errors"
	"slices"
	"time"
)

// The rules of paying a bill on its checkout: until when a first bill may
// be paid, which payment the payer gets on demand, and what a card's
// decision does to the bill.

// NotPayableAt is NotPayable at now: a first bill whose time is over
// (lapsed) cannot be paid either.
func (b *Bill) NotPayableAt(now time.Time) string {
	if r := b.NotPayable(); r != "" {
		return r
	}
	if b.lapsed(now) {
		return NotPayableFirstBillLapsed
	}
	return ""
}

// payableAt is NotPayableAt as an invalid_state error, nil when b may be
// paid at now.
func (b *Bill) payableAt(now time.Time) error {
	if r := b.NotPayableAt(now); r != "" {
		return Errorf(EINVALIDSTATE, "%s", notPayableMessages[r])
	}
	return nil
}

// lapsed tells whether the first bill of a billing that waits for it is
// past its due date (the charge plus the configuration's expires_in) with
// no payment left to pay it with. A payment issued for it keeps it payable
// until that payment expires, which cancels the billing; a bill whose
// first bill is paid by card on the checkout has none, so its due date is
// the card's deadline.
func (b *Bill) lapsed(now time.Time) bool {
	if b.Type != BillTypeDownPayment || !b.open() || b.Billing == nil || b.Billing.Status != BillingWaitingPayment || now.Before(b.DueDate) {
		return false
	}
	for _, p := range b.Payments {
		if p.Status == PaymentUnpaid && now.Before(p.ExpiresAt) {
			return false
		}
	}
	return true
}

// CanIssueAt tells whether the payer asking bill's checkout for a Pix or
// boleto at now gets one: the live one, or one issued then that is still
// payable (IssuePayment refuses one that would expire as it is issued). A
// first bill in its boleto's settlement grace gets no new Pix, so its
// checkout must not offer one.
func (b *Bill) CanIssueAt(pc *PaymentConfiguration, c *Company, method string, now time.Time) bool {
	if b.LivePayment(method, now) != nil {
		return true
	}
	if c == nil || pc == nil && b.Type == BillTypeInstallment {
		return true // nothing to price it with: left to IssuePayment
	}
	return demandPayment(c, pc, b, method, now).expires.After(now)
}

// checkMethod refuses a method the configuration does not let the payer
// pay bill b with.
func checkMethod(pc *PaymentConfiguration, b *Bill, method string) error {
	if pc != nil && slices.Contains(pc.BillMethods(b), method) {
		return nil
	}
	return &Error{Code: EINVALID, Message: "payment_method " + method + " is not accepted for this bill",
		Fields: []FieldError{{Field: "payment_method", Code: "not_allowed", Message: method + " is not accepted for this bill"}}}
}

// demandPayment is the Pix or boleto the payer asks for on bill's
// checkout, as the charge and the installment sweep issue them: an
// installment's boleto is the sweep's (installmentPayment); a Pix for an
// installment is priced and due like it, and expires when that boleto
// would stop being payable without settlement grace (a Pix settles at
// once; the provider is told its last payable instant as the Pix's due
// one); a first bill's payment is the charge's (firstPayment).
func demandPayment(c *Company, pc *PaymentConfiguration, bill *Bill, method string, now time.Time) paymentOrder {
	if bill.Type != BillTypeInstallment {
		return firstPayment(c, bill, method, now)
	}
	o := installmentPayment(c, pc, bill, now)
	if method == MethodPix {
		o.method, o.withPix, o.due = MethodPix, false, BoletoPayableUntil(o.due)
		o.expires = ExpiryAfter(o.due)
	}
	return o
}

// newCardAttempt is the payment a card attempt on bill becomes, for amount
// cents at now. It is never payable later: it expires as it is made.
func newCardAttempt(bill *Bill, card CardSummary, installments int, amount int64, now time.Time) *Payment {
	return &Payment{
		ID: NewID(), CompanyID: bill.CompanyID, Environment: bill.Environment, BillID: bill.ID, Method: MethodCreditCard, Status: PaymentUnpaid,
		AmountCents: amount, ExpiresAt: now, Installments: installments, Card: &card, CreatedAt: now, UpdatedAt: now,
	}
}

// recordCard records card attempt p (unpaid, as newCardAttempt made it) on
// bill as the acquirer decided d. Refused, p is kept as refused and the
// bill stays open. Approved, p settles the bill exactly as a paid Pix
// would (pay: the bill's other payments canceled, the billing and order
// moved on, their events), unless the bill can no longer be paid (paid by
// a racing payment, canceled) or now owes less than p charged (another
// payment received part of it meanwhile): then the approval must be voided
// at the acquirer, and p is kept as canceled. It reports whether to void.
func (m *mover) recordCard(o *Order, b *Billing, bill *Bill, p *Payment, c *Company, d CardDecision) (void bool, err error) {
	m.guardBilling(b)
	if !d.Approved {
		d.Apply(p, m.c.At)
		m.addPayment(bill, p)
		return false, nil
	}
	// Measured at the instant the card was priced (and pays the bill at),
	// a bill owing less than the card's amount received money since (or
	// had its penalty waived): kept, the card would charge it twice.
	// Measured at the decision, a fine or a day's interest begun while the
	// acquirer decided hid what was received meanwhile.
	if bill.NotPayable() != "" || bill.owed(p.CreatedAt, c) < p.AmountCents {
		m.releaseCard(bill, p)
		return true, nil
	}
	m.addPayment(bill, p)
	paidAt, amount := p.CreatedAt, p.AmountCents
	return false, m.pay(o, b, bill, p, c, Settlement{PaidAt: &paidAt, PaidAmountCents: &amount})
}

// releaseCard records card attempt p on bill as canceled, its approval
// voided at the acquirer. The caller guards the billing.
func (m *mover) releaseCard(bill *Bill, p *Payment) {
	p.Status, p.UpdatedAt = PaymentCanceled, m.c.At
	m.addPayment(bill, p)
}

// AcquirersByEnvironment is a CardAcquirer per environment. An environment
// without one takes no card.
type AcquirersByEnvironment map[Environment]CardAcquirer

// Serves tells whether env takes cards.
func (a AcquirersByEnvironment) Serves(env Environment) bool { return a[env] != nil }

// VoidingCards returns provider with a Cancel that also voids, at the
// environment's acquirer, any card approval made under the payment id. A
// card attempt is recorded as a payment intent before its acquirer is
// asked; the intents' recovery cancels an abandoned intent at the provider
// without knowing its method, and so releases a card charged by an
// attempt that died before its change was stored.
func VoidingCards(provider PaymentProvider, acquirers AcquirersByEnvironment) PaymentProvider {
	if len(acquirers) == 0 {
		return provider
	}
	return voidingCards{provider, acquirers}
}

type voidingCards struct {
	PaymentProvider
	acquirers AcquirersByEnvironment
}

// Cancel voids req's payment at the provider and any card approval. Both
// treat an id they never saw as voided. The card is voided even when the
// provider's cancel fails: a card approved just before a crash held the
// payer's money while the bank, which never saw the card, was down, for
// as long as the recovery's backoff (up to 6 h). Either failure is
// returned, so the intent stays voiding and both are asked again.
func (v voidingCards) Cancel(ctx context.Context, req CancelRequest) error {
	var errs []error
	if v.PaymentProvider != nil {
		errs = append(errs, v.PaymentProvider.Cancel(ctx, req))
	}
	if a := v.acquirers[req.Environment]; a != nil {
		errs = append(errs, a.Void(ctx, CardVoid{PaymentID: req.PaymentID}))
	}
	return errors.Join(errs...)
}

// Serves is the provider's own answer (issuing is still the provider's).
func (v voidingCards) Serves(env Environment) bool {
	return providerServes(v.PaymentProvider, env) == nil
}
