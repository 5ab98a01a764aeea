package parcela

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"time"
)

// Orders sells: it creates orders, charges them and cancels them.
type Orders struct {
	store  OrderStore
	issuer *issuer
	clock  Clock
	links  PublicLinks
}

// NewOrders returns the order use cases. provider issues the charge's first
// payment; links address the forms that events carry.
func NewOrders(store OrderStore, provider PaymentProvider, clock Clock, links PublicLinks) *Orders {
	return &Orders{store: store, issuer: &issuer{intents: store, provider: provider, clock: clock}, clock: clock, links: links}
}

var _ OrderService = (*Orders)(nil)

// CreateOrder stores a pending order of a sellable offer of the caller.
// The store checks at commit that the offer and its product still sell
// (a PATCH that stopped them since the offer was read is a conflict, and
// the offer is read and checked again), so no order is created after the
// PATCH that stopped sales answered. Orders take no seat, so an offer
// that sells out after this check is caught by the charge.
func (s *Orders) CreateOrder(ctx context.Context, a Auth, req OrderRequest) (*Order, error) {
	return s.createOrder(ctx, a, req, "")
}

var _ FormOrderService = (*Orders)(nil)

// CreateFormOrder creates an order as CreateOrder does, once per formKey:
// the order that key created already, charged or not, is answered as it
// is now. Two posts of one form at once create one order: the second
// insert finds the key taken and reads the first's.
func (s *Orders) CreateFormOrder(ctx context.Context, a Auth, formKey string, req OrderRequest) (*Order, bool, error) {
	if formKey == "" {
		return nil, false, Errorf(EINTERNAL, "an order of a form needs the form's key")
	}
	if o, err := s.store.OrderOfForm(ctx, a, formKey); ErrorCode(err) != ENOTFOUND {
		return o, false, err
	}
	o, err := s.createOrder(ctx, a, req, formKey)
	if IsConflict(err) || errors.Is(err, errFormOrdered) {
		o, err := s.store.OrderOfForm(ctx, a, formKey)
		return o, false, err
	}
	return o, err == nil, err
}

// errFormOrdered says that another post of a form created its order.
var errFormOrdered = errors.New("the form's order was created by another post")

// FormOrder reads the order formKey created.
func (s *Orders) FormOrder(ctx context.Context, a Auth, formKey string) (*Order, error) {
	return s.store.OrderOfForm(ctx, a, formKey)
}

func (s *Orders) createOrder(ctx context.Context, a Auth, req OrderRequest, formKey string) (*Order, error) {
	now := s.clock.Now()
	var v Validation
	o := buildOrder(&v, req, now)
	offer, city, err := s.orderReferences(ctx, a, o, &v, now)
	if err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	o.Address.ID, o.Address.City, o.Address.CreatedAt, o.Address.UpdatedAt = NewID(), *city, now, now
	o.ID, o.CompanyID, o.Environment, o.CreatedAt, o.UpdatedAt = NewID(), a.CompanyID, a.Environment, now, now
	o.AccessCode, o.FormKey = accessCode(), formKey
	err = decideAndApply("offer", func() error {
		if offer == nil {
			// Decided again after a conflict: a PATCH stopped the offer's
			// sales since it was read.
			if offer, err = s.store.Offer(ctx, a, o.OfferID); ErrorCode(err) == ENOTFOUND {
				return &Error{Code: EINVALID, Message: "order.offer_id is not an offer of this company and environment",
					Fields: []FieldError{{Field: "order.offer_id", Code: "not_found", Message: "is not an offer of this company and environment"}}}
			} else if err != nil {
				return err
			}
			if err := offer.Sellable(now); err != nil {
				return offerNotSellable(err)
			}
		}
		o.Offer, o.Billings = offer, []*Billing{}
		offer = nil
		err = s.store.CreateOrder(answering(ctx, o), o)
		if formKey != "" && IsConflict(err) {
			// Another post of the form took its key: not a change to decide
			// again on, but the order to answer.
			if _, ferr := s.store.OrderOfForm(ctx, a, formKey); ferr == nil {
				return errFormOrdered
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// orderReferences reads the offer and the city order o names, adding to v
// what is wrong with them (an unknown or unsellable offer, an unknown city,
// a zipcode of another state) beside the errors of o's own fields, so that
// one answer lists every field at fault: an invalid CPF hid an unsellable
// offer, and the offer a zipcode of another state, until each was fixed
// (an audit). A field already at fault is not looked up.
func (s *Orders) orderReferences(ctx context.Context, a Auth, o *Order, v *Validation, now time.Time) (*Offer, *City, error) {
	var offer *Offer
	if o.OfferID != "" && !v.Has("order.offer_id") {
		var err error
		switch offer, err = s.store.Offer(ctx, a, o.OfferID); {
		case ErrorCode(err) == ENOTFOUND:
			v.Add("order.offer_id", "not_found", "is not an offer of this company and environment")
		case err != nil:
			return nil, nil, err
		default:
			if err := offer.Sellable(now); err != nil {
				v.Add("order.offer_id", "not_sellable", ErrorMessage(err))
			}
		}
	}
	const cityField = "order.address.city_ibge_code"
	if o.Address.City.IBGECode == "" || v.Has(cityField) {
		return offer, nil, nil
	}
	city, err := s.store.City(ctx, o.Address.City.IBGECode)
	if ErrorCode(err) == ENOTFOUND {
		v.Add(cityField, "not_found", "is not a known IBGE municipality")
		return offer, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	if o.Address.Zipcode != "" && !v.Has("order.address.zipcode") {
		checkZipcodeState(v, "order.address.zipcode", &Address{Zipcode: o.Address.Zipcode, City: *city})
	}
	return offer, city, nil
}

// offerNotSellable is the answer to an order of an offer that does not
// sell (Offer.Sellable's err).
func offerNotSellable(err error) error {
	return &Error{Code: EINVALID, Message: "order.offer_id: " + ErrorMessage(err),
		Fields: []FieldError{{Field: "order.offer_id", Code: "not_sellable", Message: ErrorMessage(err)}}}
}

// Order returns one of the caller's orders with its offer and billings.
func (s *Orders) Order(ctx context.Context, a Auth, id string) (*Order, error) {
	return s.store.Order(ctx, a, id)
}

// CancelOrder cancels a pending or in-progress order, and with it its open
// billing, open bills and unpaid payments; paid bills stay paid.
func (s *Orders) CancelOrder(ctx context.Context, a Auth, id, reason string) (*Order, error) {
	var canceled *Order
	err := decideAndApply("order", func() error {
		o, err := s.store.Order(ctx, a, id)
		if err != nil {
			return err
		}
		o.linkBills()
		m := newMover(a, s.clock.Now(), s.links.Links(a.Environment))
		if err := m.cancelOrder(o, reason, o.Offer.Product.Company); err != nil {
			return err
		}
		canceled = o
		return s.store.Apply(answering(ctx, o), m.change())
	})
	if err != nil {
		return nil, err
	}
	return canceled, nil
}

// ChargeOrder charges a pending order: the billing, its bills and the first
// bill's payment are created, a seat is taken, the order moves to
// in_progress, and the events are written, all in one change. Everything
// that needs no lock (reading the order, planning, issuing the payment,
// rendering the events) happens before the store's transaction, which only
// writes; its guarded writes re-check what was read. Racing charges of one
// order leave one billing; the others get 409 invalid_state, and the
// payments they issued are voided at the provider.
//
// An environment without a payment provider answers EUNAVAILABLE, but only
// to a charge it would otherwise make: a mistaken one is told its mistake
// (a card, a due day of 99), which no retry mends, where every charge was
// answered 503 and retried.
func (s *Orders) ChargeOrder(ctx context.Context, a Auth, id string, req ChargeRequest) (*Order, error) {
	return s.charge(ctx, a, id, req, false)
}

var _ CardChargeService = (*Orders)(nil)

// ChargeOrderForCard charges a pending order as ChargeOrder does, planned
// by PlanCardCharge, except that the first bill gets no payment: the payer
// pays it by card on its checkout before its due date (the charge plus the
// configuration's expires_in), or the billing lapses (Sweeps.LapseFirstBills).
func (s *Orders) ChargeOrderForCard(ctx context.Context, a Auth, id string, req ChargeRequest) (*Order, error) {
	return s.charge(ctx, a, id, req, true)
}

func (s *Orders) charge(ctx context.Context, a Auth, id string, req ChargeRequest, byCard bool) (*Order, error) {
	var charged *Order
	err := decideAndApply("order", func() error {
		o, err := s.store.Order(ctx, a, id)
		if err != nil {
			return err
		}
		if o.Status != OrderPending {
			return Errorf(EINVALIDSTATE, "order is %s; only a pending order can be charged", o.Status)
		}
		now := s.clock.Now()
		c := o.Offer.Product.Company
		links := s.links.Links(a.Environment)
		var plan *ChargePlan
		if byCard {
			plan, err = PlanCardCharge(req, o, c, now)
		} else {
			plan, err = PlanCharge(req, o, c, now, links.PublicURL+"/pay/"+c.Slug+"/offers/"+o.Offer.ID)
		}
		if err != nil {
			return err
		}
		if !byCard {
			if err := providerServes(s.issuer.provider, a.Environment); err != nil {
				return err
			}
		}
		billing := newBilling(a, o, plan, now)
		var issued []*Payment
		abandon := func() {
			for _, p := range issued {
				s.issuer.abandon(ctx, p)
			}
		}
		if first := billing.Bills[0]; !byCard {
			p, err := s.issuer.issue(ctx, firstPayment(c, first, plan.Method, now))
			if err != nil {
				return err
			}
			first.Payments, issued = []*Payment{p}, []*Payment{p}
		}
		if o.Offer.Seats != nil {
			o.Offer.SeatsTaken++ // offers without a limit keep no count
		}
		m := newMover(a, now, links)
		if err := m.moveOrder(o, OrderInProgress); err != nil {
			abandon()
			return err
		}
		o.Billings = append(o.Billings, billing)
		m.c.NewBilling, m.c.NewPayments, m.c.SeatOf = billing, issued, o.Offer
		if err := m.chargeEvents(o, billing, c); err != nil {
			abandon()
			return err
		}
		if err := s.store.Apply(answering(ctx, o), m.change()); err != nil {
			abandon()
			return err
		}
		charged = o
		return nil
	})
	return charged, err
}

// chargeEvents renders the events of a charge, in the order they are listed.
func (m *mover) chargeEvents(o *Order, billing *Billing, c *Company) error {
	m.c.Events = slices.Grow(m.c.Events, 2+len(billing.Bills))
	if err := m.orderEvent(o, OrderInProgress); err != nil {
		return err
	}
	if err := m.billingEvent(billing, BillingWaitingPayment); err != nil {
		return err
	}
	for _, b := range billing.Bills {
		if err := m.billEvent(b, c, BillPending); err != nil {
			return err
		}
	}
	return nil
}

// newBilling builds the billing of a charge planned at now, with its bills.
func newBilling(a Auth, o *Order, plan *ChargePlan, now time.Time) *Billing {
	b := &Billing{
		ID: NewID(), CompanyID: a.CompanyID, Environment: a.Environment, OrderID: o.ID, PaymentConfigurationID: plan.Configuration.ID,
		AmountCents: plan.Schedule.TotalCents, DueDay: plan.DueDay, Installments: plan.Installments, Status: BillingWaitingPayment,
		SignatureRemoteIP: plan.RemoteIP, SignatureUserAgent: plan.UserAgent, CreatedAt: now, UpdatedAt: now,
		PaymentConfiguration: plan.Configuration, Bills: make([]*Bill, 0, len(plan.Schedule.Bills)),
	}
	cost := plan.Schedule.Cost()
	b.planned = &cost
	for _, s := range plan.Schedule.Bills {
		b.Bills = append(b.Bills, &Bill{
			ID: NewID(), CompanyID: a.CompanyID, Environment: a.Environment, BillingID: b.ID, OrderID: o.ID, Number: s.Number, Type: s.Type,
			Status: BillPending, AmountCents: s.AmountCents, DueDate: s.DueDate, EffectiveDueDate: s.EffectiveDueDate(),
			AuthenticationCode: authenticationCode(), Details: s.Details, CreatedAt: now, UpdatedAt: now, Payments: []*Payment{}, Billing: b,
		})
	}
	if first := b.Bills[0]; plan.Method == MethodBoleto {
		// A boleto is payable through the end of its due day, moved to a
		// business day: its bill is not late before then.
		first.EffectiveDueDate = BoletoPayableUntil(first.DueDate)
	}
	return b
}

const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// authenticationCode is the bill's secret for its public checkout link.
func authenticationCode() string { return randomCode(12) }

// accessCode is the order's secret for its page, which shows the
// customer's data: 26 letters of 5 random bits each, 130 bits.
func accessCode() string { return randomCode(26) }

// randomCode draws n letters of codeAlphabet, whose 32 letters divide 256:
// every letter is equally likely.
func randomCode(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}
