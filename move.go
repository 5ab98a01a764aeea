package parcela

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"time"
)

// The rules of movement: which status may follow which, per entity. Every
// state change goes through a mover, which refuses any other move.
var moves = map[string]map[string][]string{
	"order": {
		OrderPending:    {OrderInProgress, OrderCanceled},
		OrderInProgress: {OrderFinished, OrderCanceled},
	},
	"billing": {
		// An upfront billing finishes straight from waiting_payment.
		BillingWaitingPayment: {BillingActive, BillingFinished, BillingCanceled},
		BillingActive:         {BillingFinished, BillingCanceled},
	},
	"bill": {
		BillPending: {BillPaid, BillOverdue, BillCanceled},
		BillOverdue: {BillPaid, BillCanceled},
	},
	"payment": {
		PaymentUnpaid: {PaymentPaid, PaymentExpired, PaymentCanceled},
		// A bank's notice of money it took on a boleto or Pix code before
		// the code was voided or expired (Payments.PayPayment).
		PaymentCanceled: {PaymentPaid},
		PaymentExpired:  {PaymentPaid},
	},
}

// CanMove tells whether an entity (order, billing, bill or payment) may
// move from one status to another.
func CanMove(entity, from, to string) bool {
	return slices.Contains(moves[entity][from], to)
}

// mover builds a Change: it moves entities in memory, checks each move
// against the rules, records the state each was decided on (the first
// time it moves), and renders each event from the entities as they are at
// that point of the change.
type mover struct {
	c        Change
	a        Auth
	links    Links
	billings map[string]int
	bills    map[string]int
	payments map[string]int
	created  map[string]bool // payments this change inserts
}

func newMover(a Auth, now time.Time, links Links) *mover {
	return &mover{c: Change{At: now, Owner: a}, a: a, links: links,
		billings: map[string]int{}, bills: map[string]int{}, payments: map[string]int{}, created: map[string]bool{}}
}

// addPayment makes p one of the payments the change inserts, and of its
// bill's. Its moves in the change are not guarded writes: the insert
// stores it as it ends up.
func (m *mover) addPayment(bill *Bill, p *Payment) {
	m.created[p.ID] = true
	m.c.NewPayments = append(m.c.NewPayments, p)
	bill.Payments = append(bill.Payments, p)
}

func (m *mover) refuse(entity, id, from, to string) error {
	return Errorf(EINTERNAL, "%s %s may not move from %s to %s", entity, id, from, to)
}

// guardBilling records the billing as decided on at its current state, so
// that the change fails if anything of it moved meanwhile.
func (m *mover) guardBilling(b *Billing) {
	if _, ok := m.billings[b.ID]; !ok {
		m.billings[b.ID] = len(m.c.Billings)
		m.c.Billings = append(m.c.Billings, BillingMove{Billing: b, From: b.Status, Version: b.Version})
	}
}

func (m *mover) moveBilling(b *Billing, to string) error {
	if !CanMove("billing", b.Status, to) {
		return m.refuse("billing", b.ID, b.Status, to)
	}
	m.guardBilling(b)
	b.Status, b.UpdatedAt = to, m.c.At
	return nil
}

func (m *mover) moveOrder(o *Order, to string) error {
	if !CanMove("order", o.Status, to) {
		return m.refuse("order", o.ID, o.Status, to)
	}
	if m.c.Order == nil {
		m.c.Order = &OrderMove{Order: o, From: o.Status}
	}
	o.Status, o.UpdatedAt = to, m.c.At
	return nil
}

// touchBill records a change of a bill that keeps its status (a penalty
// waiver). A bill's change is its billing's too: b.Billing is guarded.
func (m *mover) touchBill(b *Bill) {
	m.guardBilling(b.Billing)
	if _, ok := m.bills[b.ID]; !ok {
		m.bills[b.ID] = len(m.c.Bills)
		m.c.Bills = append(m.c.Bills, BillMove{Bill: b, From: b.Status})
	}
	b.UpdatedAt = m.c.At
}

func (m *mover) moveBill(b *Bill, to string) error {
	if !CanMove("bill", b.Status, to) {
		return m.refuse("bill", b.ID, b.Status, to)
	}
	m.touchBill(b)
	b.Status = to
	return nil
}

func (m *mover) movePayment(p *Payment, to string) error {
	if !CanMove("payment", p.Status, to) {
		return m.refuse("payment", p.ID, p.Status, to)
	}
	from := p.Status
	m.touchPayment(p)
	p.Status = to
	if p.Method != MethodCreditCard && from == PaymentUnpaid && (to == PaymentCanceled || to == PaymentPaid && p.PaidAmountCents < p.AmountCents) {
		// A boleto or Pix was issued at the provider before the mover saw
		// it (even one this change inserts), and stays payable there until
		// voided; so does one paid below its amount (its bill paid with
		// another's money) for its rest. A card attempt is stored paid or
		// refused, never unpaid. A canceled code was voided when canceled,
		// and an expired one takes nothing.
		m.c.Voids = append(m.c.Voids, CancelRequest{PaymentID: p.ID, Environment: p.Environment})
	}
	return nil
}

// touchPayment records a change of a payment that keeps its status (a
// settlement below its amount).
func (m *mover) touchPayment(p *Payment) {
	if _, ok := m.payments[p.ID]; !ok && !m.created[p.ID] {
		m.payments[p.ID] = len(m.c.Payments)
		m.c.Payments = append(m.c.Payments, PaymentMove{Payment: p, From: p.Status})
	}
	p.UpdatedAt = m.c.At
}

// event adds an event of the change at its time, its data rendered (or
// failed to render) into buf, which goes back to eventBuffers.
func (m *mover) event(entity, id, event string, buf *[]byte, data []byte, err error) error {
	if err != nil {
		releaseEventBuffer(buf, nil)
		return fmt.Errorf("render %s %s event: %w", entity, event, err)
	}
	m.c.Events = append(m.c.Events, m.newEvent(entity, id, event))
	m.c.Events[len(m.c.Events)-1].Data = bytes.Clone(data)
	releaseEventBuffer(buf, data)
	return nil
}

// newEvent is an event of the change, without its data.
func (m *mover) newEvent(entity, id, event string) Event {
	return Event{ID: NewID(), CompanyID: m.a.CompanyID, Environment: m.a.Environment,
		Entity: entity, EntityID: id, Event: event, CreatedAt: m.c.At}
}

// eventBuffers hold events' data while it is written, each then copied
// at its size: written into a new slice, an order's 8.4 KB grew through
// a dozen sizes.
var eventBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func eventBuffer() *[]byte { return eventBuffers.Get().(*[]byte) }

// releaseEventBuffer returns buf, grown to written if that is longer.
func releaseEventBuffer(buf *[]byte, written []byte) {
	if cap(written) > cap(*buf) {
		*buf = written
	}
	if cap(*buf) <= 1<<20 {
		*buf = (*buf)[:0]
		eventBuffers.Put(buf)
	}
}

func (m *mover) billEvent(b *Bill, c *Company, event string) error {
	f := NewBillEndpointForm(b, c, m.c.At, m.links)
	buf := eventBuffer()
	data, err := f.AppendJSON(*buf)
	return m.event("bill", b.ID, event, buf, data, err)
}

// paidBill records paid bill's event, then moves its billing and order on
// (advance). The event keeps its place (and its id's order) before theirs,
// but its data is rendered after them: the bill's GET shows its billing,
// which, once the change commits, has moved on too.
func (m *mover) paidBill(o *Order, b *Billing, bill *Bill, c *Company) error {
	i := len(m.c.Events)
	m.c.Events = append(m.c.Events, m.newEvent("bill", bill.ID, BillPaid))
	if err := m.advance(o, b); err != nil {
		return err
	}
	buf := eventBuffer()
	data, err := NewBillEndpointForm(bill, c, m.c.At, m.links).AppendJSON(*buf)
	if err != nil {
		releaseEventBuffer(buf, nil)
		return fmt.Errorf("render bill %s event: %w", BillPaid, err)
	}
	m.c.Events[i].Data = bytes.Clone(data)
	releaseEventBuffer(buf, data)
	return nil
}

func (m *mover) billingEvent(b *Billing, event string) error {
	f := NewBillingOrderForm(b, m.links)
	buf := eventBuffer()
	data, err := f.AppendJSON(*buf)
	return m.event("billing", b.ID, event, buf, data, err)
}

func (m *mover) orderEvent(o *Order, event string) error {
	f := NewOrderForm(o, m.links)
	buf := eventBuffer()
	data, err := f.AppendJSON(*buf)
	return m.event("order", o.ID, event, buf, data, err)
}

// change returns the decided change, or nil when nothing moved.
func (m *mover) change() *Change {
	c := m.c
	if len(c.Billings) == 0 && c.Order == nil && len(c.Bills) == 0 && len(c.Payments) == 0 &&
		c.NewBilling == nil && len(c.NewPayments) == 0 && len(c.Events) == 0 && len(c.Voids) == 0 {
		return nil
	}
	return &c
}
