package parcela

import (
	"slices"
	"testing"
	"time"
)

// voidIDs are the payment ids a change voids at the provider, each with
// its environment.
func voidIDs(c *Change) []string {
	var out []string
	if c == nil {
		return out
	}
	for _, v := range c.Voids {
		out = append(out, v.PaymentID+"@"+string(v.Environment))
	}
	return out
}

// withMethods gives every payment of o a method and an environment, and
// bill i a second payment of method (a boleto beside a Pix) with status.
func withMethods(o *Order, i int, method, status string) *Payment {
	for _, bill := range o.Billings[0].Bills {
		for _, p := range bill.Payments {
			p.Method, p.Environment = MethodPix, Production
		}
	}
	bill := o.Billings[0].Bills[i]
	q := &Payment{ID: "other" + bill.ID, BillID: bill.ID, Method: method, Environment: Production, Status: status, AmountCents: 10000, ExpiresAt: bill.DueDate}
	bill.Payments = append(bill.Payments, q)
	return q
}

// A settlement voids at the provider the bill's other payments it cancels,
// and nothing else: not a payment that is no longer payable, not the
// payments of other bills, nothing for a partial settlement.
func TestPayVoidsTheBillsOtherPayments(t *testing.T) {
	t.Parallel()
	partial := int64(4000)
	tests := []struct {
		name   string
		method string // of the bill's other payment
		status string
		s      Settlement
		want   []string
	}{
		{"a live boleto beside the paid Pix", MethodBoleto, PaymentUnpaid, Settlement{}, []string{"otherbill0@production"}},
		{"a live Pix beside the paid Pix", MethodPix, PaymentUnpaid, Settlement{}, []string{"otherbill0@production"}},
		{"an expired boleto", MethodBoleto, PaymentExpired, Settlement{}, nil},
		{"a refused card attempt", MethodCreditCard, PaymentRefused, Settlement{}, nil},
		{"a partial settlement cancels nothing", MethodBoleto, PaymentUnpaid, Settlement{PaidAmountCents: &partial}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := chargedOrder(3)
			b := o.Billings[0]
			other := withMethods(o, 0, tt.method, tt.status)
			// Paid the last millisecond before the Pix expires.
			m := newMover(Auth{CompanyID: c.ID, Environment: Production}, moveNow.Add(-time.Millisecond), Links{})
			if err := m.pay(o, b, b.Bills[0], b.Bills[0].Payments[0], c, tt.s); err != nil {
				t.Fatal(err)
			}
			if got := voidIDs(m.change()); !slices.Equal(got, tt.want) {
				t.Errorf("voids %v, want %v (other payment %s)", got, tt.want, other.Status)
			}
		})
	}
}

// A card approval pays the bill as a Pix would: the live boleto beside it
// is voided, never the card. An approval for a bill paid meanwhile is
// voided at the acquirer by the checkout itself, not by the change.
func TestCardApprovalVoidsTheBillsBoleto(t *testing.T) {
	t.Parallel()
	o, c := chargedOrder(1)
	b := o.Billings[0]
	withMethods(o, 0, MethodBoleto, PaymentUnpaid)
	card := newCardAttempt(b.Bills[0], CardSummary{}, 1, 10000, moveNow)
	m := newMover(Auth{CompanyID: c.ID, Environment: Production}, moveNow, Links{})
	if void, err := m.recordCard(o, b, b.Bills[0], card, c, CardDecision{Approved: true}); err != nil || void {
		t.Fatal(void, err)
	}
	if got, want := voidIDs(m.change()), []string{"payment0@production", "otherbill0@production"}; !slices.Equal(got, want) {
		t.Errorf("voids %v, want %v", got, want)
	}

	late := newCardAttempt(b.Bills[0], CardSummary{}, 1, 10000, moveNow)
	m = newMover(Auth{CompanyID: c.ID, Environment: Production}, moveNow, Links{})
	if void, err := m.recordCard(o, b, b.Bills[0], late, c, CardDecision{Approved: true}); err != nil || !void {
		t.Fatal(void, err)
	}
	if got := voidIDs(m.change()); len(got) != 0 {
		t.Errorf("an approval on a paid bill voids %v through the change", got)
	}
}

// Canceling a billing (alone, with its order, or by the order's
// cancelation) voids every unpaid payment of its open bills; a paid bill's
// payments, and payments no longer payable, are not voided. Expiring a
// payment voids nothing: it is no longer payable at the bank either.
func TestCancelVoidsTheOpenBillsPayments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cancel func(m *mover, o *Order, c *Company) error
		want   []string
	}{
		{"billing and order", func(m *mover, o *Order, c *Company) error {
			return m.cancelBillingAndOrder(o, o.Billings[0], "refunded_by_company", c)
		}, []string{"payment1@production", "otherbill1@production", "payment3@production"}},
		{"order", func(m *mover, o *Order, c *Company) error {
			return m.cancelOrder(o, "customer_dropout", c)
		}, []string{"payment1@production", "otherbill1@production", "payment3@production"}},
		{"expired payment", func(m *mover, o *Order, c *Company) error {
			b := o.Billings[0]
			_, err := m.expire(o, b, b.Bills[3], b.Bills[3].Payments[0], c)
			return err
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := chargedOrder(4)
			b := o.Billings[0]
			b.Status = BillingActive
			b.Bills[0].Status, b.Bills[0].Payments[0].Status = BillPaid, PaymentPaid
			withMethods(o, 1, MethodBoleto, PaymentUnpaid)
			b.Bills[2].Payments[0].Status = PaymentExpired
			m := newMover(Auth{CompanyID: c.ID, Environment: Production}, moveNow, Links{})
			if err := tt.cancel(m, o, c); err != nil {
				t.Fatal(err)
			}
			if got := voidIDs(m.change()); !slices.Equal(got, tt.want) {
				t.Errorf("voids %v, want %v", got, tt.want)
			}
		})
	}
}
