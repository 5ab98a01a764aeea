package parcela

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Issuing a payment happens in three steps, none of them inside another's
// transaction: an intent is recorded (committed, with its nosso número),
// the provider is called with the payment id as its idempotency key, and
// the change that stores the payment completes the intent, guarded on its
// still being issuing. Whatever stops the sequence (a failed call, a lost
// race, a crash) leaves the intent issuing; it is then voided at the
// provider, at once or by the recovery sweep, so that every payment a
// provider issued is either stored or canceled.

// Intent states. A completed intent is deleted with the change that
// stores its payment.
const (
	IntentIssuing = "issuing"
	IntentVoiding = "voiding" // claimed for voiding; the provider's cancel may still be due
	IntentVoided  = "voided"
)

// PaymentIntent is a payment about to be issued at the provider.
type PaymentIntent struct {
	ID          string // the payment's id and the provider's idempotency key
	CompanyID   string
	Environment Environment
	BillID      string // the charge's first bill is stored with the payment
	Method      string
	AmountCents int64
	NossoNumero int64
	State       string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const (
	// issueTimeout bounds one call to the provider.
	issueTimeout = 30 * time.Second
	// IntentTimeout is how long an intent may stay issuing before the
	// recovery sweep voids it: long past issueTimeout, so only an intent
	// whose issuer died (or gave up) is taken from it.
	IntentTimeout = 2 * time.Minute
	// voidTimeout bounds voiding an intent right after its issue failed.
	voidTimeout = 10 * time.Second
)

// pixKeyNamespace derives each company's (simulated) Pix key.
var pixKeyNamespace = uuid.MustParse("0d7f4c1e-5b0a-4f43-9a51-7c2a9e3f6b21")

// paymentOrder is a payment to issue for a bill.
type paymentOrder struct {
	company *Company
	bill    *Bill
	method  string
	amount  int64
	due     time.Time // printed on a boleto; a Pix charge's expiry
	expires time.Time
	withPix bool
}

// issuer records intents, calls the provider and voids what was not stored.
type issuer struct {
	intents  IntentStore
	provider PaymentProvider
	clock    Clock
}

// issue records the intent of o's payment and issues it at the provider.
// The caller stores the payment with a change (which completes the intent)
// or, when that fails, abandons it.
func (s *issuer) issue(ctx context.Context, o paymentOrder) (*Payment, error) {
	bill, c := o.bill, o.company
	if err := providerServes(s.provider, bill.Environment); err != nil {
		return nil, err
	}
	if o.amount <= 0 {
		return nil, Errorf(EINVALIDSTATE, "bill %s owes %d cents: there is no payment to issue", bill.ID, o.amount)
	}
	now := s.clock.Now()
	if !o.expires.After(now) {
		// Its time to pay is over (a first bill in its boleto's settlement
		// grace): a code that expired as it was issued pays nothing.
		return nil, Errorf(EINVALIDSTATE, "bill %s can no longer be paid with a new %s: it would expire at %s", bill.ID, o.method,
			o.expires.In(SaoPaulo).Format(time.RFC3339))
	}
	nosso, err := s.intents.NextNossoNumero(ctx)
	if err != nil {
		return nil, err
	}
	p := &Payment{
		ID: NewID(), CompanyID: bill.CompanyID, Environment: bill.Environment, BillID: bill.ID, Method: o.method, Status: PaymentUnpaid,
		AmountCents: o.amount, ExpiresAt: o.expires.In(SaoPaulo), Installments: 1, CreatedAt: now, UpdatedAt: now,
	}
	in := &PaymentIntent{ID: p.ID, CompanyID: p.CompanyID, Environment: p.Environment, BillID: p.BillID, Method: p.Method,
		AmountCents: p.AmountCents, NossoNumero: nosso, State: IntentIssuing, CreatedAt: now, UpdatedAt: now}
	if err := s.intents.RecordIntent(ctx, in); err != nil {
		return nil, err
	}
	city := "SAO PAULO"
	if c.Address != nil {
		city = c.Address.City.Name
	}
	call, cancel := context.WithTimeout(ctx, issueTimeout)
	issued, err := s.provider.Issue(call, IssueRequest{
		PaymentID: p.ID, Environment: p.Environment, Method: o.method, AmountCents: p.AmountCents, DueDate: o.due.In(SaoPaulo),
		NossoNumero: nosso, WithPix: o.withPix, MerchantName: c.Name, MerchantCity: city,
		MerchantKey: uuid.NewSHA1(pixKeyNamespace, []byte(c.ID)).String(),
	})
	cancel()
	if err != nil {
		// A call that failed may still have issued (a timeout after the
		// provider acted): void it.
		s.abandon(ctx, p)
		return nil, issueFailed(o.method, err)
	}
	p.Barcode, p.BarcodeDigits, p.PixCode, p.NossoNumero = issued.Barcode, issued.BarcodeDigits, issued.PixCode, issued.NossoNumero
	if o.method == MethodPix {
		p.PixCode = nil // the code is the payment's barcode itself
	}
	return p, nil
}

// issueFailed is the error of a provider call that failed: the provider's
// own domain errors as they are, anything else unavailable (the cause
// stays in the message for the logs).
func issueFailed(method string, err error) error {
	if ErrorCode(err) != EINTERNAL {
		return err
	}
	return fmt.Errorf("%w: %w", Errorf(EUNAVAILABLE, "the payment provider did not issue the %s payment; nothing was charged; retry later", method), err)
}

// abandon voids the intent of a payment that will not be stored. It is
// best effort, on its own short deadline even when the request's context
// is gone: what it leaves undone, the recovery sweep does.
func (s *issuer) abandon(ctx context.Context, p *Payment) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), voidTimeout)
	defer cancel()
	_, _ = s.void(ctx, p.Environment, p.ID) // the recovery sweep retries a failure
}

// void cancels an intent's payment at the provider unless a change stored
// it: the intent is first claimed (issuing → voiding), so a completion
// racing it conflicts instead of storing a payment the provider canceled.
// It reports whether it voided the intent (false: it was stored, or voided
// already).
func (s *issuer) void(ctx context.Context, env Environment, id string) (bool, error) {
	return s.voidClaimed(ctx, env, id, nil)
}

// voidClaimed is void with release, when not nil, run between the claim
// and the provider's cancel: what only the caller knows how to release
// (a card approval by its authorization id) is released only once no
// change can store the payment.
func (s *issuer) voidClaimed(ctx context.Context, env Environment, id string, release func(context.Context) error) (bool, error) {
	if err := s.intents.StartVoid(ctx, id, s.clock.Now()); IsConflict(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if release != nil {
		if err := release(ctx); err != nil {
			return false, err
		}
	}
	if err := s.provider.Cancel(ctx, CancelRequest{PaymentID: id, Environment: env}); err != nil {
		return false, fmt.Errorf("cancel payment %s at the provider: %w", id, err)
	}
	if err := s.intents.FinishVoid(ctx, id, s.clock.Now()); err != nil && !IsConflict(err) {
		return false, err
	}
	return true, nil
}

// firstPayment is the payment a charge issues for its first bill, or the
// payer asks for on its checkout at now: for what the bill has not
// received (its amount less an earlier payment's partial settlement), due
// with it; a Pix charge expires at the due instant, a boleto after its
// last payable day and the company's grace. A bill charged as a boleto is
// payable through the end of its last payable day (its effective due
// date), and so is a Pix asked for on its checkout, at any time (a Pix
// settles at once, so it needs no grace): one asked for before the due
// instant expired then, beside a page saying the bill was payable through
// Monday (an audit), and one asked for after it would otherwise have
// expired before it was issued.
func firstPayment(c *Company, bill *Bill, method string, now time.Time) paymentOrder {
	o := paymentOrder{company: c, bill: bill, method: method, amount: bill.AmountCents - bill.Received(), due: bill.DueDate,
		expires: PaymentExpiry(method, bill.DueDate, c.BoletoGraceBusinessDays)}
	if method == MethodPix && (!now.Before(bill.DueDate) || bill.EffectiveDueDate.After(bill.DueDate)) {
		o.due = BoletoPayableUntil(bill.DueDate)
		o.expires = ExpiryAfter(o.due)
	}
	if method == MethodBoleto && pastDueDay(bill.DueDate, now) {
		o.due = BoletoPayableUntil(bill.DueDate)
	}
	return o
}

// pastDueDay tells whether now is on a São Paulo day after due's. A boleto
// issued then for a bill still payable (due on a Saturday, payable through
// the Monday) is due on its last payable day, not on the day already past:
// a bank registers no boleto due before its issue, and the payer read a
// past date on it (an audit). Its amount and expiry are the same either
// way.
func pastDueDay(due, now time.Time) bool {
	return SaoPauloDate(due).Before(SaoPauloDate(now))
}

// installmentPayment is the boleto (with a Pix code for bolepix) that an
// installment bill of a billing paid through pc needs at now.
//
// Until its effective due date has passed it is due on the bill's due
// date, for what the bill owes then. After it (its earlier boleto expired
// unpaid, or none was issued in time), it is due on the calendar day
// PaymentExpiryHours from now, moved to the next business day, for what
// the bill will owe at the end of that day: late fine and interest to
// that day, less what the bill's earlier payments received. A bill issued its first payment only after
// its due date (the payer had nothing to pay with) is not late: that
// payment carries the original amount, and the bill is late only after it
// expires (Bill.lateFrom), so a boleto or Pix asked for meanwhile owes no
// penalty either, though it is due days from now (never on the date
// already past), after that expiry.
// Either way the boleto expires after its last payable day and the
// company's grace.
func installmentPayment(c *Company, pc *PaymentConfiguration, bill *Bill, now time.Time) paymentOrder {
	o := paymentOrder{company: c, bill: bill, method: MethodBoleto, due: installmentDue(c, bill, now),
		withPix: pc.FinancedType != nil && *pc.FinancedType == "bolepix"}
	o.amount = bill.owed(bill.pricedFor(c, now, o.due), c)
	o.expires = BoletoExpiry(o.due, c.BoletoGraceBusinessDays)
	return o
}

// installmentDue is the due date of a payment issued for installment bill
// at now: the bill's own until its effective due date has passed, then
// the calendar day PaymentExpiryHours from now moved to a business day.
func installmentDue(c *Company, bill *Bill, now time.Time) time.Time {
	if now.After(bill.EffectiveDueDate) {
		// On a business day: one due on a Saturday is taken for its amount
		// on the Monday, when the bill owes two more days of interest.
		return EffectiveDueDate(EndOfDay(now.Add(time.Duration(c.PaymentExpiryHours) * time.Hour)))
	}
	if pastDueDay(bill.DueDate, now) {
		return BoletoPayableUntil(bill.DueDate)
	}
	return bill.DueDate
}

// pricedFor is the instant whose penalty a payment issued for bill at now,
// due at due, carries: only a bill whose time to pay is over owes its
// penalty to the due date; one not late yet owes none, however late the
// payment issued for it is due. Nor does one whose penalties a waiver
// holds off at now (PenaltyFreeThrough): a waiver to tomorrow issued a
// boleto due in days carrying the fine and interest it waived, which the
// payer paid inside the waiver and the bill recorded as owed (an audit).
func (b *Bill) pricedFor(c *Company, now, due time.Time) time.Time {
	if through, _ := b.PenaltyFreeThrough(); !now.After(through) {
		return now
	}
	return due
}
