package parcela

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"
)

// Checkout is what the payer's pages do without a token: read an offer,
// an order or a bill by its unguessable id (and, for anything personal, its
// secret code), issue a Pix or boleto on demand, and charge a card.
type Checkout struct {
	store     CheckoutStore
	issuer    *issuer
	acquirers AcquirersByEnvironment
	clock     Clock
	links     PublicLinks
}

// NewCheckout returns the payer's use cases. provider issues payments on
// demand, and voids what an abandoned intent left, cards included
// (VoidingCards); acquirers charge cards, in the environments they serve.
func NewCheckout(store CheckoutStore, provider PaymentProvider, acquirers AcquirersByEnvironment, clock Clock, links PublicLinks) *Checkout {
	return &Checkout{store: store, issuer: &issuer{intents: store, provider: provider, clock: clock}, acquirers: acquirers, clock: clock, links: links}
}

var _ CheckoutService = (*Checkout)(nil)

// TakesCards tells whether env has a card acquirer.
func (s *Checkout) TakesCards(env Environment) bool { return s.acquirers.Serves(env) }

// PublicOffer finds an offer of env by its company's slug, with its
// product, company and configurations. A slug or id of nothing here is
// not_found, the same answer either way. Neither is looked up unless it
// has the form of one: a path may carry any bytes, and PostgreSQL fails a
// query given text that is not UTF-8 or holds NUL.
func (s *Checkout) PublicOffer(ctx context.Context, env Environment, companySlug, offerID string) (*Offer, error) {
	offerID = LowerUUID(offerID)
	if !IsUUID(offerID) || !validSlug(companySlug) {
		return nil, NotFound("offer")
	}
	return s.store.PublicOffer(ctx, env, companySlug, offerID)
}

// opens tells whether code opens k's page, comparing in constant time. An
// empty code opens nothing (orders made before access codes have none).
func (k PayerKey) opens(code string) bool {
	return k.Code != "" && subtle.ConstantTimeCompare([]byte(k.Code), []byte(code)) == 1
}

// OrderForPayer reads an order with its offer, billings, bills and
// payments. A wrong code is not_found, like a missing order.
func (s *Checkout) OrderForPayer(ctx context.Context, env Environment, orderID, accessCode string) (*Order, error) {
	orderID = LowerUUID(orderID)
	if !IsUUID(orderID) || accessCode == "" {
		return nil, NotFound("order")
	}
	k, err := s.store.OrderKey(ctx, env, orderID)
	if err != nil {
		return nil, err
	}
	if !k.opens(accessCode) {
		return nil, NotFound("order")
	}
	return s.store.Order(ctx, k.Auth, orderID)
}

// CheckOrderCode tells whether accessCode opens the order's page, as
// OrderForPayer would, without reading the order: a bill's checkout opened
// from its purchase links to the order's page only when the code opens it.
func (s *Checkout) CheckOrderCode(ctx context.Context, env Environment, orderID, accessCode string) error {
	orderID = LowerUUID(orderID)
	if !IsUUID(orderID) || accessCode == "" {
		return NotFound("order")
	}
	k, err := s.store.OrderKey(ctx, env, orderID)
	if err != nil {
		return err
	}
	if !k.opens(accessCode) {
		return NotFound("order")
	}
	return nil
}

// payerBill reads the order of a bill the code opens, with every billing,
// bill and payment, and returns the bill in it, its Billing set.
func (s *Checkout) payerBill(ctx context.Context, env Environment, billID, code string) (Auth, *Order, *Bill, error) {
	billID = LowerUUID(billID)
	if !IsUUID(billID) || code == "" {
		return Auth{}, nil, nil, NotFound("bill")
	}
	k, err := s.store.BillKey(ctx, env, billID)
	if err != nil {
		return Auth{}, nil, nil, err
	}
	if !k.opens(code) {
		return Auth{}, nil, nil, NotFound("bill")
	}
	o, err := s.store.Order(ctx, k.Auth, k.OrderID)
	if err != nil {
		return Auth{}, nil, nil, err
	}
	o.linkBills()
	for _, b := range o.Billings {
		for _, bill := range b.Bills {
			if bill.ID == billID {
				return k.Auth, o, bill, nil
			}
		}
	}
	return Auth{}, nil, nil, NotFound("bill")
}

// BillForPayer reads a bill with its payments and its billing (with the
// billing's configuration, not its other bills), and the offer that sold
// it, with its product and company but not its configurations. It reads
// only what the bill's page shows: the payer's actions read the whole
// order (payerBill).
func (s *Checkout) BillForPayer(ctx context.Context, env Environment, billID, authenticationCode string) (*Bill, *Offer, error) {
	billID = LowerUUID(billID)
	if !IsUUID(billID) || authenticationCode == "" {
		return nil, nil, NotFound("bill")
	}
	return s.store.PayerBill(ctx, env, billID, func(k PayerKey) bool { return k.opens(authenticationCode) })
}

// IssuePayment gives the payer a Pix or boleto for an open bill: the live
// one of that method if there is one, or one issued now with the code the
// charge and the installment sweep issue with, stored in a change guarded
// by the billing, so racing issues leave one.
func (s *Checkout) IssuePayment(ctx context.Context, env Environment, billID, authenticationCode, method string) (*Payment, error) {
	if method != MethodPix && method != MethodBoleto {
		return nil, checkMethod(nil, nil, method)
	}
	var issued *Payment
	err := decideAndApply("bill", func() error {
		a, o, bill, err := s.payerBill(ctx, env, billID, authenticationCode)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		if err := bill.payableAt(now); err != nil {
			return err
		}
		b := bill.Billing
		if err := checkMethod(b.PaymentConfiguration, bill, method); err != nil {
			return err
		}
		if issued = bill.LivePayment(method, now); issued != nil {
			return nil
		}
		p, err := s.issuer.issue(ctx, demandPayment(o.Offer.Product.Company, b.PaymentConfiguration, bill, method, now))
		if err != nil {
			return err
		}
		m := newMover(a, now, s.links.Links(env))
		m.guardBilling(b)
		m.addPayment(bill, p)
		if err := s.store.Apply(ctx, m.change()); err != nil {
			// A racing issue stored its payment first (the next round
			// finds it), or the store failed: this one is voided.
			s.issuer.abandon(ctx, p)
			return err
		}
		issued = p
		return nil
	})
	return issued, err
}

// cardTimeout bounds one call to the acquirer.
const cardTimeout = 30 * time.Second

// PayByCard charges a card for what an open bill owes now, and only when
// that is what the payer was shown (CardPayment.ShownCents). The card is
// checked, then sent to the acquirer outside any transaction; its decision
// is stored in a change guarded by the billing, decided again on a fresh
// read after a conflict but never sent twice. Approved, the bill is paid
// as by any payment; refused, the attempt is kept with its reason and the
// bill stays open. An approval that finds the bill paid meanwhile (a
// racing Pix, another card), or owing less than the card was charged (part
// of a Pix settled), is voided, so nothing is paid twice; once voided it
// is kept canceled, whatever a later round finds the bill owes. Only the
// card's brand and last four digits are kept.
func (s *Checkout) PayByCard(ctx context.Context, env Environment, billID, authenticationCode string, card CardPayment) (*Payment, error) {
	acquirer := s.acquirers[env]
	if acquirer == nil {
		return nil, Errorf(EUNAVAILABLE, "cards are not accepted in %s: no card acquirer is configured", env)
	}
	a, o, bill, err := s.payerBill(ctx, env, billID, authenticationCode)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if err := bill.payableAt(now); err != nil {
		return nil, err
	}
	c := o.Offer.Product.Company
	pc := bill.Billing.PaymentConfiguration
	if err := checkMethod(pc, bill, MethodCreditCard); err != nil {
		return nil, err
	}
	amount := bill.Outstanding(now, c)
	if err := card.CheckShown(amount); err != nil {
		return nil, err
	}
	summary, err := card.Check(now, CardInstallmentLimit(bill, pc, c, amount))
	if err != nil {
		return nil, err
	}
	if until := bill.CardsRestUntil(now); !until.IsZero() {
		return nil, CardsResting(until)
	}
	attempt := newCardAttempt(bill, summary, card.Installments, amount, now)
	// The attempt is an intent, committed before the acquirer is asked:
	// the change that records the attempt completes it, and one that a
	// crash left is voided by the intents' recovery, at the acquirer too
	// (VoidingCards). It is recorded only while the bill's refusals, those
	// in flight counted, are under the limit: attempts sent at once, to
	// any instance, do not pass it together.
	err = s.store.RecordCardIntent(ctx, &PaymentIntent{ID: attempt.ID, CompanyID: attempt.CompanyID, Environment: env, BillID: bill.ID,
		Method: MethodCreditCard, AmountCents: attempt.AmountCents, State: IntentIssuing, CreatedAt: now, UpdatedAt: now}, cardAttemptLimit(now))
	if errors.Is(err, ErrCardAttemptsExhausted) {
		return nil, CardsResting(time.Time{})
	} else if err != nil {
		return nil, err
	}
	call, cancel := context.WithTimeout(ctx, cardTimeout)
	d, err := acquirer.Authorize(call, CardAuthorization{PaymentID: attempt.ID, AmountCents: attempt.AmountCents,
		Installments: attempt.Installments, Card: card, MerchantName: c.Name})
	cancel()
	if err != nil {
		// A call that failed may still have approved (a timeout after the
		// acquirer acted): void it. The cause never names the card.
		s.voidCard(ctx, acquirer, attempt, CardDecision{})
		return nil, fmt.Errorf("%w: %w", Errorf(EUNAVAILABLE, "the card acquirer did not answer; the card was not charged; try again"), err)
	}
	var stored *Payment
	void := false
	err = decideAndApply("bill", func() error {
		if stored != nil { // a conflict: decide again on a fresh read
			if a, o, bill, err = s.payerBill(ctx, env, billID, authenticationCode); err != nil {
				return err
			}
		}
		p := *attempt
		stored = &p
		m := newMover(a, s.clock.Now(), s.links.Links(env))
		if void {
			// Released in an earlier round: it stays released, though the
			// bill may owe the card's amount again now (its fine began).
			m.guardBilling(bill.Billing)
			m.releaseCard(bill, stored)
			return s.store.Apply(ctx, m.change())
		}
		if void, err = m.recordCard(o, bill.Billing, bill, stored, o.Offer.Product.Company, d); err != nil {
			return err
		}
		if void {
			// Release the money before anything is written: a failure here
			// leaves the attempt unrecorded rather than recorded as
			// released while the card stays charged.
			if err := acquirer.Void(ctx, CardVoid{PaymentID: p.ID, AuthorizationID: d.AuthorizationID}); err != nil {
				return fmt.Errorf("void card approval of payment %s: %w", p.ID, err)
			}
		}
		return s.store.Apply(ctx, m.change())
	})
	if err != nil {
		// Nothing records the attempt: release any approval rather than
		// keep money that no bill shows.
		s.voidCard(ctx, acquirer, attempt, d)
		return nil, err
	}
	if void {
		return nil, Errorf(EINVALIDSTATE, "the bill was paid, canceled or partly paid while the card was being charged; the card charge was released")
	}
	return stored, nil
}

// voidCard releases a card attempt that no change recorded: it claims the
// attempt's intent, then voids its approval at the acquirer and the
// intent. The claim comes first: a change that committed although the
// store reported a failure (a connection lost during the COMMIT) deleted
// the intent, and the bill it paid keeps its money. It is best effort, on
// its own deadline even when ctx is gone: what it leaves undone (a claim
// the store could not make, a void that failed), the intents' recovery
// does.
func (s *Checkout) voidCard(ctx context.Context, acquirer CardAcquirer, attempt *Payment, d CardDecision) {
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cardTimeout)
	defer cancel()
	_, _ = s.issuer.voidClaimed(vctx, attempt.Environment, attempt.ID, func(ctx context.Context) error {
		return acquirer.Void(ctx, CardVoid{PaymentID: attempt.ID, AuthorizationID: d.AuthorizationID})
	})
}
