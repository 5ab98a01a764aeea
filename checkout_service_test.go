package parcela

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// cardStore stands in for the store of a card payment on the down payment
// of chargedOrder(3). Only the methods PayByCard calls are implemented;
// any other would panic on the nil interface.
type cardStore struct {
	CheckoutStore
	billID   string
	received int64 // what the down payment's payment received before
	split    int   // the down payment's max_down_payment_installments, if set
	applyErr error
	applied  []*Change
	intents  []string // id state, as recorded
	// refused are the instants of the bill's refused card attempts;
	// inFlight, attempts on it that other requests are making.
	refused  []time.Time
	inFlight int
	limits   []CardAttemptLimit // as RecordCardIntent was given them
}

func (s *cardStore) BillKey(ctx context.Context, env Environment, id string) (PayerKey, error) {
	if id != s.billID {
		return PayerKey{}, NotFound("bill")
	}
	return PayerKey{Owned: Owned{ID: id, Auth: Auth{CompanyID: "company", Environment: env}}, OrderID: "order", Code: "CODE"}, nil
}

func (s *cardStore) Order(ctx context.Context, a Auth, id string) (*Order, error) {
	o, _ := chargedOrder(3)
	o.Billings[0].Bills[0].ID = s.billID
	o.Billings[0].PaymentConfiguration.AllowedDownPaymentMethods = []string{MethodCreditCard}
	o.Billings[0].Bills[0].Payments[0].PaidAmountCents = s.received
	if s.split > 0 {
		o.Billings[0].PaymentConfiguration.MaxDownPaymentInstallments = &s.split
	}
	bill := o.Billings[0].Bills[0]
	for _, at := range s.refused {
		reason := RefusedCardDeclined
		bill.Payments = append(bill.Payments, &Payment{ID: NewID(), BillID: bill.ID, Method: MethodCreditCard, Status: PaymentRefused,
			RefusedReason: &reason, CreatedAt: at, UpdatedAt: at})
	}
	return o, nil
}

// RecordCardIntent counts as the store does: the refusals since the
// limit's start, and the attempts in flight.
func (s *cardStore) RecordCardIntent(ctx context.Context, in *PaymentIntent, l CardAttemptLimit) error {
	s.limits = append(s.limits, l)
	n := s.inFlight
	for _, at := range s.refused {
		if at.After(l.Since) {
			n++
		}
	}
	if n >= l.Max {
		return ErrCardAttemptsExhausted
	}
	return s.RecordIntent(ctx, in)
}

func (s *cardStore) RecordIntent(ctx context.Context, in *PaymentIntent) error {
	s.intents = append(s.intents, in.ID+" "+in.State)
	return nil
}

func (s *cardStore) StartVoid(ctx context.Context, id string, at time.Time) error {
	s.intents = append(s.intents, id+" "+IntentVoiding)
	return nil
}

func (s *cardStore) FinishVoid(ctx context.Context, id string, at time.Time) error {
	s.intents = append(s.intents, id+" "+IntentVoided)
	return nil
}

func (s *cardStore) Apply(ctx context.Context, c *Change) error {
	s.applied = append(s.applied, c)
	return s.applyErr
}

// recordingAcquirer approves or fails, and records what it was asked.
type recordingAcquirer struct {
	err        error
	authorized []CardAuthorization
	voided     []CardVoid
}

func (a *recordingAcquirer) Authorize(ctx context.Context, req CardAuthorization) (CardDecision, error) {
	a.authorized = append(a.authorized, req)
	if a.err != nil {
		return CardDecision{}, a.err
	}
	return CardDecision{Approved: true, AuthorizationID: "AUTH-" + req.PaymentID}, nil
}

func (a *recordingAcquirer) Void(ctx context.Context, v CardVoid) error {
	a.voided = append(a.voided, v)
	return nil
}

func TestPayByCardFailures(t *testing.T) {
	t.Parallel()
	visa := CardPayment{Number: "4111111111111111", HolderName: "MARIA", ExpiryMonth: 12, ExpiryYear: 2030, CVV: "123", Installments: 1}
	tests := []struct {
		name        string
		env         Environment
		applyErr    error
		acquirerErr error
		code        string
		authorized  int
		voided      bool
	}{
		{name: "no acquirer in the environment", env: Production, code: EUNAVAILABLE},
		// It may have approved before it timed out: void.
		{name: "the acquirer does not answer", env: Sandbox, acquirerErr: errors.New("dial tcp: timeout"), code: EUNAVAILABLE, authorized: 1, voided: true},
		// An approval no change could record is released.
		{name: "the store fails", env: Sandbox, applyErr: errors.New("disk full"), code: EINTERNAL, authorized: 1, voided: true},
		{name: "the billing never stops changing", env: Sandbox, applyErr: &Conflict{Entity: "billing"}, code: ECONFLICT, authorized: 1, voided: true},
		{name: "approved and stored", env: Sandbox, authorized: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := &cardStore{billID: NewID(), applyErr: tt.applyErr}
			acq := &recordingAcquirer{err: tt.acquirerErr}
			acquirers := AcquirersByEnvironment{Sandbox: acq}
			s := NewCheckout(store, VoidingCards(nil, acquirers), acquirers, NewTestClock(moveNow.Add(-time.Hour)), LinksByEnvironment{})
			p, err := s.PayByCard(context.Background(), tt.env, store.billID, "CODE", visa)
			if ErrorCode(err) != tt.code && !(tt.code == "" && err == nil) {
				t.Fatalf("err %v, want %s", err, tt.code)
			}
			if len(acq.authorized) != tt.authorized || (len(acq.voided) > 0) != tt.voided || len(acq.voided) > 2 {
				t.Fatalf("authorized %d, voided %v", len(acq.authorized), acq.voided)
			}
			if tt.voided && acq.voided[0].PaymentID != acq.authorized[0].PaymentID ||
				tt.voided && tt.acquirerErr == nil && acq.voided[0].AuthorizationID != "AUTH-"+acq.authorized[0].PaymentID {
				t.Fatalf("voided %+v, authorized %+v", acq.voided, acq.authorized)
			}
			if tt.code == "" && (p == nil || p.Status != PaymentPaid || len(store.applied) != 1) {
				t.Fatalf("payment %+v after %d changes", p, len(store.applied))
			}
			if tt.authorized == 1 && acq.authorized[0].Card.Number != visa.Number {
				t.Fatal("the acquirer did not get the card")
			}
			// The attempt was an intent before the acquirer was asked,
			// voided when nothing recorded it.
			var want []string
			if tt.authorized == 1 {
				id := acq.authorized[0].PaymentID
				want = []string{id + " " + IntentIssuing}
				if tt.code != "" {
					want = append(want, id+" "+IntentVoiding, id+" "+IntentVoided)
				}
			}
			if !slices.Equal(store.intents, want) {
				t.Fatalf("intents %v, want %v", store.intents, want)
			}
		})
	}
}

// A bill owing a few cents (its Pix paid all but R$ 0,01) is split in no
// more card installments than it has cents: none of R$ 0,00 is sent to
// the acquirer.
func TestPayByCardSplitsNoInstallmentOfNothing(t *testing.T) {
	t.Parallel()
	visa := CardPayment{Number: "4111111111111111", HolderName: "MARIA", ExpiryMonth: 12, ExpiryYear: 2030, CVV: "123", Installments: 2}
	store := &cardStore{billID: NewID(), received: 9_999, split: 6}
	acq := &recordingAcquirer{}
	acquirers := AcquirersByEnvironment{Sandbox: acq}
	s := NewCheckout(store, VoidingCards(nil, acquirers), acquirers, NewTestClock(moveNow.Add(-time.Hour)), LinksByEnvironment{})
	_, err := s.PayByCard(context.Background(), Sandbox, store.billID, "CODE", visa)
	var e *Error
	if !errors.As(err, &e) || e.Code != EINVALID || len(e.Fields) != 1 || e.Fields[0].Field != "card.installments" {
		t.Fatalf("2 installments of a bill owing 1 cent: %v", err)
	}
	if len(acq.authorized) != 0 {
		t.Fatalf("the acquirer was asked for %+v", acq.authorized)
	}
	visa.Installments = 1
	if p, err := s.PayByCard(context.Background(), Sandbox, store.billID, "CODE", visa); err != nil || p.AmountCents != 1 || p.Status != PaymentPaid {
		t.Fatalf("in one: %+v, %v", p, err)
	}
}

// A bill whose cards were refused CardRefusalLimit times in the last
// CardRefusalWindow takes no card until the oldest of them is that old:
// the attempt is refused (rate_limited) before the acquirer is asked, and
// records nothing, where a card tester could send a bill's checkout card
// after card, each one to the acquirer. Attempts in flight on other
// requests count, as the store counts them.
func TestPayByCardRestsAfterTooManyRefusals(t *testing.T) {
	t.Parallel()
	now := moveNow.Add(-time.Hour)
	visa := CardPayment{Number: "4111111111111111", HolderName: "MARIA", ExpiryMonth: 12, ExpiryYear: 2030, CVV: "123", Installments: 1}
	ago := func(ds ...time.Duration) []time.Time {
		var out []time.Time
		for _, d := range ds {
			out = append(out, now.Add(-d))
		}
		return out
	}
	tests := []struct {
		name     string
		refused  []time.Time
		inFlight int
		rests    bool
		until    time.Time
	}{
		{name: "four refusals", refused: ago(time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute)},
		{name: "five in a day", refused: ago(time.Minute, time.Hour, 2*time.Hour, 3*time.Hour, 23*time.Hour), rests: true,
			until: now.Add(time.Hour)},
		{name: "six in a day", refused: ago(time.Minute, time.Hour, 2*time.Hour, 3*time.Hour, 5*time.Hour, 23*time.Hour), rests: true,
			until: now.Add(19 * time.Hour)},
		{name: "the oldest a day old", refused: ago(time.Minute, time.Hour, 2*time.Hour, 3*time.Hour, 24*time.Hour)},
		{name: "four, and one in flight", refused: ago(time.Minute, time.Hour, 2*time.Hour, 3*time.Hour), inFlight: 1, rests: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := &cardStore{billID: NewID(), refused: tt.refused, inFlight: tt.inFlight}
			acq := &recordingAcquirer{}
			acquirers := AcquirersByEnvironment{Sandbox: acq}
			s := NewCheckout(store, VoidingCards(nil, acquirers), acquirers, NewTestClock(now), LinksByEnvironment{})
			_, err := s.PayByCard(context.Background(), Sandbox, store.billID, "CODE", visa)
			if !tt.rests {
				if err != nil || len(acq.authorized) != 1 {
					t.Fatalf("err %v, %d authorized", err, len(acq.authorized))
				}
				if l := store.limits[0]; l.Max != CardRefusalLimit || !l.Since.Equal(now.Add(-CardRefusalWindow)) {
					t.Fatalf("recorded under %+v", l)
				}
				return
			}
			if ErrorCode(err) != ERATELIMITED || len(acq.authorized) != 0 || len(store.intents) != 0 || len(store.applied) != 0 {
				t.Fatalf("err %v; authorized %d, intents %v, changes %d", err, len(acq.authorized), store.intents, len(store.applied))
			}
			o, _ := store.Order(context.Background(), Auth{}, "order")
			if got := o.Billings[0].Bills[0].CardsRestUntil(now); !got.Equal(tt.until) {
				t.Fatalf("rests until %v, want %v", got, tt.until)
			}
		})
	}
}
