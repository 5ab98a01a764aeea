package web

import (
	"context"
	"crypto/subtle"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"parcela"
	"parcela/bank"
)

// fakeStore is an in-memory stand-in for the use cases the pages call. It
// plans with the domain's own code (BuildOrder, PlanCharge, PlanCardCharge,
// BuildSchedule through them, Penalty, the card checks) and issues with the
// simulated bank and acquirer, so its bills and amounts are the real ones.
// Everything it returns is a copy: the pages never share its state.
type fakeStore struct {
	mu        sync.Mutex
	clock     *parcela.TestClock
	bank      *bank.Simulated
	acquirer  bank.SimulatedAcquirer
	companies map[string]*parcela.Company
	offers    map[string]*parcela.Offer
	orders    map[string]*parcela.Order
	bills     map[string]*parcela.Bill
	payments  map[string]*parcela.Payment
	seq       int
	events    []string // "bill.paid <id>", in order
}

func newFakeStore(clock *parcela.TestClock) *fakeStore {
	return &fakeStore{clock: clock, bank: bank.NewSimulated(), companies: map[string]*parcela.Company{}, offers: map[string]*parcela.Offer{},
		orders: map[string]*parcela.Order{}, bills: map[string]*parcela.Bill{}, payments: map[string]*parcela.Payment{}}
}

// id makes a random UUID, as the store does; seq numbers boletos.
func (s *fakeStore) id() string {
	s.seq++
	return uuid.NewString()
}

func (s *fakeStore) addCompany(c *parcela.Company) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.companies[c.ID] = c
}

func (s *fakeStore) addOffer(o *parcela.Offer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offers[o.ID] = o
}

// --- CheckoutService

func (s *fakeStore) PublicOffer(ctx context.Context, env parcela.Environment, slug, id string) (*parcela.Offer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.offers[id]
	if !ok || o.Environment != env || s.companies[o.CompanyID].Slug != slug {
		return nil, parcela.NotFound("offer")
	}
	return s.offerCopy(o), nil
}

func (s *fakeStore) offerCopy(o *parcela.Offer) *parcela.Offer {
	c := *o
	p := *o.Product
	company := *s.companies[o.CompanyID]
	p.Company, c.Product = &company, &p
	return &c
}

func (s *fakeStore) OrderForPayer(ctx context.Context, env parcela.Environment, id, code string) (*parcela.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok || o.Environment != env || subtle.ConstantTimeCompare([]byte(o.AccessCode), []byte(code)) != 1 {
		return nil, parcela.NotFound("order")
	}
	return s.orderCopy(o), nil
}

func (s *fakeStore) CheckOrderCode(ctx context.Context, env parcela.Environment, id, code string) error {
	_, err := s.OrderForPayer(ctx, env, id, code)
	return err
}

func (s *fakeStore) orderCopy(o *parcela.Order) *parcela.Order {
	c := *o
	c.Offer = s.offerCopy(s.offers[o.OfferID])
	c.Billings = nil
	for _, b := range o.Billings {
		bc := *b
		bc.Bills = nil
		for _, bill := range b.Bills {
			bc.Bills = append(bc.Bills, s.billCopy(bill, false))
		}
		c.Billings = append(c.Billings, &bc)
	}
	return &c
}

// billCopy copies a bill and its payments, with its billing summary when asked.
func (s *fakeStore) billCopy(b *parcela.Bill, withBilling bool) *parcela.Bill {
	c := *b
	c.Payments = nil
	for _, p := range b.Payments {
		pc := *p
		c.Payments = append(c.Payments, &pc)
	}
	c.Billing = nil
	if withBilling {
		billing := *b.Billing
		billing.Bills = nil
		c.Billing = &billing
	}
	return &c
}

func (s *fakeStore) findBill(env parcela.Environment, id, code string) (*parcela.Bill, error) {
	b, ok := s.bills[id]
	if !ok || b.Environment != env || subtle.ConstantTimeCompare([]byte(b.AuthenticationCode), []byte(code)) != 1 {
		return nil, parcela.NotFound("bill")
	}
	return b, nil
}

func (s *fakeStore) BillForPayer(ctx context.Context, env parcela.Environment, id, code string) (*parcela.Bill, *parcela.Offer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.findBill(env, id, code)
	if err != nil {
		return nil, nil, err
	}
	return s.billCopy(b, true), s.offerCopy(s.offers[b.Billing.PaymentConfiguration.OfferID]), nil
}

func (s *fakeStore) IssuePayment(ctx context.Context, env parcela.Environment, id, code, method string) (*parcela.Payment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.findBill(env, id, code)
	if err != nil {
		return nil, err
	}
	if err := b.Payable(); err != nil {
		return nil, err
	}
	pc := b.Billing.PaymentConfiguration
	if method == parcela.MethodCreditCard || !slices.Contains(pc.BillMethods(b), method) {
		return nil, &parcela.Error{Code: parcela.EINVALID, Message: "method not allowed",
			Fields: []parcela.FieldError{{Field: "payment.payment_method", Code: "not_allowed", Message: "is not allowed for this bill"}}}
	}
	now := s.clock.Now()
	if p := b.LivePayment(method, now); p != nil {
		c := *p
		return &c, nil
	}
	due := b.DueDate
	if !due.After(now) {
		due = now.Add(72 * time.Hour)
	}
	amount := b.Outstanding(now, s.companies[b.CompanyID])
	p, err := s.issue(b, method, amount, due, pc.FinancedType != nil && *pc.FinancedType == "bolepix" && method == parcela.MethodBoleto)
	if err != nil {
		return nil, err
	}
	c := *p
	return &c, nil
}

func (s *fakeStore) issue(b *parcela.Bill, method string, amount int64, due time.Time, withPix bool) (*parcela.Payment, error) {
	p := &parcela.Payment{ID: s.id(), CompanyID: b.CompanyID, Environment: b.Environment, BillID: b.ID, Method: method,
		Status: parcela.PaymentUnpaid, AmountCents: amount, ExpiresAt: due, Installments: 1, CreatedAt: s.clock.Now(), UpdatedAt: s.clock.Now()}
	out, err := s.bank.Issue(context.Background(), parcela.IssueRequest{PaymentID: p.ID, Method: method, AmountCents: amount, DueDate: due,
		NossoNumero: int64(s.seq), WithPix: withPix, MerchantName: "ESCOLA DEMO", MerchantCity: "SAO PAULO", MerchantKey: "11222333000181"})
	if err != nil {
		return nil, err
	}
	p.Barcode, p.BarcodeDigits, p.PixCode, p.NossoNumero = out.Barcode, out.BarcodeDigits, out.PixCode, out.NossoNumero
	if method == parcela.MethodPix {
		p.PixCode = nil // as the store keeps it: the code is the barcode
	}
	b.Payments = append(b.Payments, p)
	s.payments[p.ID] = p
	return p, nil
}

func (s *fakeStore) PayByCard(ctx context.Context, env parcela.Environment, id, code string, card parcela.CardPayment) (*parcela.Payment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.findBill(env, id, code)
	if err != nil {
		return nil, err
	}
	if err := b.Payable(); err != nil {
		return nil, err
	}
	c := s.companies[b.CompanyID]
	pc := b.Billing.PaymentConfiguration
	if !slices.Contains(pc.BillMethods(b), parcela.MethodCreditCard) {
		return nil, &parcela.Error{Code: parcela.EINVALID, Message: "cards not allowed",
			Fields: []parcela.FieldError{{Field: "payment.payment_method", Code: "not_allowed", Message: "is not allowed for this bill"}}}
	}
	now := s.clock.Now()
	if err := card.CheckShown(b.Outstanding(now, c)); err != nil {
		return nil, err
	}
	if _, err := card.Check(now, parcela.CardInstallmentLimit(b, pc, c, b.Outstanding(now, c))); err != nil {
		return nil, err
	}
	if until := b.CardsRestUntil(now); !until.IsZero() {
		return nil, parcela.CardsResting(until)
	}
	p := &parcela.Payment{ID: s.id(), CompanyID: b.CompanyID, Environment: b.Environment, BillID: b.ID, Method: parcela.MethodCreditCard,
		Status: parcela.PaymentUnpaid, AmountCents: b.Outstanding(now, c), ExpiresAt: now, Installments: card.Installments, CreatedAt: now}
	d, err := s.acquirer.Authorize(ctx, parcela.CardAuthorization{PaymentID: p.ID, AmountCents: p.AmountCents, Installments: card.Installments, Card: card, MerchantName: c.Name})
	if err != nil {
		return nil, err
	}
	d.Apply(p, now)
	b.Payments = append(b.Payments, p)
	s.payments[p.ID] = p
	if p.Status == parcela.PaymentPaid {
		s.settle(b, now)
	}
	cp := *p
	return &cp, nil
}

// settle pays bill b and moves its billing and order on, as the store does.
func (s *fakeStore) settle(b *parcela.Bill, now time.Time) {
	b.Status, b.PaidAt = parcela.BillPaid, &now
	for _, p := range b.Payments {
		if p.Status == parcela.PaymentUnpaid {
			p.Status = parcela.PaymentCanceled
		}
	}
	s.events = append(s.events, "bill.paid "+b.ID)
	billing := b.Billing
	all := true
	for _, other := range billing.Bills {
		all = all && other.Status == parcela.BillPaid
	}
	o := s.orders[billing.OrderID]
	switch {
	case all:
		billing.Status, o.Status = parcela.BillingFinished, parcela.OrderFinished
	case billing.Status == parcela.BillingWaitingPayment:
		billing.Status = parcela.BillingActive
	}
}

// --- OrderService

func (s *fakeStore) CreateOrder(ctx context.Context, a parcela.Auth, req parcela.OrderRequest) (*parcela.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createOrder(a, req, "")
}

// CreateFormOrder answers the order of formKey, as the store's unique key
// does, or creates it.
func (s *fakeStore) CreateFormOrder(ctx context.Context, a parcela.Auth, formKey string, req parcela.OrderRequest) (*parcela.Order, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.orders {
		if o.FormKey == formKey && o.CompanyID == a.CompanyID && o.Environment == a.Environment {
			return s.orderCopy(o), false, nil
		}
	}
	o, err := s.createOrder(a, req, formKey)
	return o, err == nil, err
}

// FormOrder finds the order of formKey.
func (s *fakeStore) FormOrder(ctx context.Context, a parcela.Auth, formKey string) (*parcela.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.orders {
		if o.FormKey == formKey && o.CompanyID == a.CompanyID && o.Environment == a.Environment {
			return s.orderCopy(o), nil
		}
	}
	return nil, parcela.NotFound("order")
}

func (s *fakeStore) createOrder(a parcela.Auth, req parcela.OrderRequest, formKey string) (*parcela.Order, error) {
	now := s.clock.Now()
	o, err := parcela.BuildOrder(req, now)
	if err != nil {
		return nil, err
	}
	offer, ok := s.offers[o.OfferID]
	if !ok || offer.CompanyID != a.CompanyID || offer.Environment != a.Environment {
		return nil, &parcela.Error{Code: parcela.EINVALID, Message: "order.offer_id not found",
			Fields: []parcela.FieldError{{Field: "order.offer_id", Code: "not_found", Message: "is not an offer of this company"}}}
	}
	if err := offer.Sellable(now); err != nil { // as the domain answers
		return nil, &parcela.Error{Code: parcela.EINVALID, Message: "order.offer_id: " + parcela.ErrorMessage(err),
			Fields: []parcela.FieldError{{Field: "order.offer_id", Code: "not_sellable", Message: parcela.ErrorMessage(err)}}}
	}
	p, _ := loadPlaces()
	city, ok := p.byCode[o.Address.City.IBGECode]
	if !ok {
		return nil, &parcela.Error{Code: parcela.EINVALID, Message: "order.address.city_ibge_code is not a known IBGE municipality",
			Fields: []parcela.FieldError{{Field: "order.address.city_ibge_code", Code: "not_found", Message: "is not a known IBGE municipality"}}}
	}
	o.Address.City = city
	if err := parcela.CheckZipcodeState("order.address.zipcode", &o.Address); err != nil {
		return nil, err
	}
	o.ID, o.AccessCode, o.CompanyID, o.Environment, o.CreatedAt, o.UpdatedAt = s.id(), randomString(24), a.CompanyID, a.Environment, now, now
	o.FormKey = formKey
	s.orders[o.ID] = o
	return s.orderCopy(o), nil
}

func (s *fakeStore) Order(ctx context.Context, a parcela.Auth, id string) (*parcela.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok || o.CompanyID != a.CompanyID || o.Environment != a.Environment {
		return nil, parcela.NotFound("order")
	}
	return s.orderCopy(o), nil
}

func (s *fakeStore) CancelOrder(ctx context.Context, a parcela.Auth, id, reason string) (*parcela.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok || o.CompanyID != a.CompanyID {
		return nil, parcela.NotFound("order")
	}
	o.Status, o.CancelationReason = parcela.OrderCanceled, &reason
	for _, b := range o.Billings {
		b.Status = parcela.BillingCanceled
		for _, bill := range b.Bills {
			if bill.Status != parcela.BillPaid {
				bill.Status = parcela.BillCanceled
			}
		}
	}
	return s.orderCopy(o), nil
}

func (s *fakeStore) ChargeOrder(ctx context.Context, a parcela.Auth, id string, req parcela.ChargeRequest) (*parcela.Order, error) {
	return s.charge(a, id, req, false)
}

// ChargeOrderForCard is the CardChargeService of the second stage.
func (s *fakeStore) ChargeOrderForCard(ctx context.Context, a parcela.Auth, id string, req parcela.ChargeRequest) (*parcela.Order, error) {
	return s.charge(a, id, req, true)
}

func (s *fakeStore) charge(a parcela.Auth, id string, req parcela.ChargeRequest, byCard bool) (*parcela.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok || o.CompanyID != a.CompanyID || o.Environment != a.Environment {
		return nil, parcela.NotFound("order")
	}
	if o.Status != parcela.OrderPending {
		return nil, parcela.Errorf(parcela.ECONFLICT, "order already charged")
	}
	now := s.clock.Now()
	c := s.companies[o.CompanyID]
	withOffer := *o
	withOffer.Offer = s.offers[o.OfferID]
	var plan *parcela.ChargePlan
	var err error
	if byCard {
		plan, err = parcela.PlanCardCharge(req, &withOffer, c, now)
	} else {
		plan, err = parcela.PlanCharge(req, &withOffer, c, now, "")
	}
	if err != nil {
		return nil, err
	}
	billing := &parcela.Billing{ID: s.id(), CompanyID: o.CompanyID, Environment: o.Environment, OrderID: o.ID,
		PaymentConfigurationID: plan.Configuration.ID, AmountCents: plan.Schedule.TotalCents, DueDay: plan.DueDay,
		Installments: len(plan.Schedule.Bills), Status: parcela.BillingWaitingPayment, SignatureRemoteIP: plan.RemoteIP,
		SignatureUserAgent: plan.UserAgent, CreatedAt: now, PaymentConfiguration: plan.Configuration}
	for _, sb := range plan.Schedule.Bills {
		b := &parcela.Bill{ID: s.id(), CompanyID: o.CompanyID, Environment: o.Environment, BillingID: billing.ID, OrderID: o.ID,
			Number: sb.Number, Type: sb.Type, Status: parcela.BillPending, AmountCents: sb.AmountCents, DueDate: sb.DueDate,
			EffectiveDueDate: sb.EffectiveDueDate(), AuthenticationCode: randomString(12), Details: sb.Details, CreatedAt: now, Billing: billing}
		billing.Bills = append(billing.Bills, b)
		s.bills[b.ID] = b
	}
	if first := billing.Bills[0]; plan.Method == parcela.MethodBoleto {
		// As the order service does: a boleto's bill is payable through its due day.
		first.EffectiveDueDate = parcela.BoletoPayableUntil(first.DueDate)
	}
	if !byCard {
		first := billing.Bills[0]
		if _, err := s.issue(first, plan.Method, first.AmountCents, first.DueDate, false); err != nil {
			return nil, err
		}
	}
	o.Billings = append(o.Billings, billing)
	o.Status = parcela.OrderInProgress
	s.offers[o.OfferID].SeatsTaken++
	return s.orderCopy(o), nil
}

// --- PaymentService

func (s *fakeStore) PayPayment(ctx context.Context, a parcela.Auth, id string, st parcela.Settlement) (*parcela.Bill, *parcela.Company, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[id]
	if !ok || p.CompanyID != a.CompanyID {
		return nil, nil, parcela.NotFound("payment")
	}
	b := s.bills[p.BillID]
	if p.Status != parcela.PaymentPaid {
		now := s.clock.Now()
		p.Status, p.PaidAt, p.PaidAmountCents = parcela.PaymentPaid, &now, p.AmountCents
		s.settle(b, now)
	}
	c := *s.companies[b.CompanyID]
	return s.billCopy(b, true), &c, nil
}

func (s *fakeStore) ExpirePayment(ctx context.Context, a parcela.Auth, id string) (*parcela.Bill, *parcela.Company, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[id]
	if !ok || p.CompanyID != a.CompanyID {
		return nil, nil, parcela.NotFound("payment")
	}
	if p.Status == parcela.PaymentUnpaid {
		p.Status = parcela.PaymentExpired
	}
	b := s.bills[p.BillID]
	c := *s.companies[b.CompanyID]
	return s.billCopy(b, true), &c, nil
}

func (s *fakeStore) PaymentForPayer(ctx context.Context, env parcela.Environment, id string) (*parcela.Payment, *parcela.Bill, *parcela.Company, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[id]
	if !ok || p.Environment != env {
		return nil, nil, nil, parcela.NotFound("payment")
	}
	b := s.billCopy(s.bills[p.BillID], true) // with its billing, as the store's
	c := *s.companies[b.CompanyID]
	for _, bp := range b.Payments {
		if bp.ID == id {
			return bp, b, &c, nil
		}
	}
	return nil, nil, nil, parcela.NotFound("payment")
}

func (s *fakeStore) PublicPayment(ctx context.Context, env parcela.Environment, id string) (*parcela.Payment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[id]
	if !ok || p.Environment != env {
		return nil, parcela.NotFound("payment")
	}
	c := *p
	return &c, nil
}

// --- what tests look at

// orderList returns copies of every order.
func (s *fakeStore) orderList() []*parcela.Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*parcela.Order
	for _, o := range s.orders {
		out = append(out, s.orderCopy(o))
	}
	return out
}

func (s *fakeStore) eventList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

var (
	_ parcela.CheckoutService   = (*fakeStore)(nil)
	_ parcela.OrderService      = (*fakeStore)(nil)
	_ parcela.CardChargeService = (*fakeStore)(nil)
	_ parcela.PaymentService    = (*fakeStore)(nil)
)
