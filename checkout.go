package parcela

import (
	"context"
	"time"
)

// CardChargeService charges an order whose first bill the customer pays by
// card on the bill's checkout page, which the offer page opens next. The
// API's charge refuses cards; this is the payer pages' own door.
type CardChargeService interface {
	// ChargeOrderForCard is ChargeOrder planned by PlanCardCharge: the
	// billing and its bills are created as by ChargeOrder, with the same
	// events, but the first bill gets no payment until its card is charged.
	ChargeOrderForCard(ctx context.Context, a Auth, orderID string, req ChargeRequest) (*Order, error)
}

// PlanCardCharge validates a charge whose first bill is paid by card and
// returns its plan, with Method credit_card. The configuration must take a
// card for its first bill (AcceptsCardFirst). Every other rule and the
// schedule are PlanCharge's, which do not depend on the method: the plan is
// made as a boleto charge of the same configuration.
func PlanCardCharge(req ChargeRequest, o *Order, c *Company, now time.Time) (*ChargePlan, error) {
	var chosen *PaymentConfiguration
	if req.PaymentConfigurationID != nil {
		for _, pc := range o.Offer.PaymentConfigurations {
			if pc.ID == LowerUUID(*req.PaymentConfigurationID) {
				chosen = pc
			}
		}
	}
	if chosen != nil && !chosen.AcceptsCardFirst() {
		return nil, &Error{Code: EINVALID, Message: "payment.payment_method credit_card is not accepted by this configuration",
			Fields: []FieldError{{Field: "payment.payment_method", Code: "not_allowed", Message: "credit_card is not accepted by this configuration"}}}
	}
	asBoleto := req
	method := MethodBoleto
	asBoleto.Payment = &struct {
		PaymentMethod *string `json:"payment_method"`
	}{&method}
	offer := *o.Offer
	offer.PaymentConfigurations = make([]*PaymentConfiguration, len(o.Offer.PaymentConfigurations))
	for i, pc := range o.Offer.PaymentConfigurations {
		offer.PaymentConfigurations[i] = pc
		if pc == chosen {
			boleto := *pc
			boleto.PaymentMethods, boleto.AllowedDownPaymentMethods = []string{MethodBoleto}, []string{MethodBoleto}
			offer.PaymentConfigurations[i] = &boleto
		}
	}
	order := *o
	order.Offer = &offer
	p, err := PlanCharge(asBoleto, &order, c, now, "")
	if err != nil {
		return nil, err
	}
	p.Configuration, p.Method = chosen, MethodCreditCard
	return p, nil
}

// Why a bill cannot be paid now: NotPayable's answers.
const (
	NotPayableBillPaid           = "bill_paid"
	NotPayableBillCanceled       = "bill_canceled"
	NotPayableBillingCanceled    = "billing_canceled"
	NotPayableBillingFinished    = "billing_finished"
	NotPayableDownPaymentPending = "down_payment_pending"
	// The first bill's time ran out with nothing to pay it with; a sweep
	// cancels its billing and order (Sweeps.LapseFirstBills).
	NotPayableFirstBillLapsed = "first_bill_lapsed"
)

var notPayableMessages = map[string]string{
	NotPayableBillPaid:           "the bill is already paid",
	NotPayableBillCanceled:       "the bill is canceled",
	NotPayableBillingCanceled:    "the billing is canceled",
	NotPayableBillingFinished:    "the billing is finished",
	NotPayableDownPaymentPending: "the down payment must be paid first",
	NotPayableFirstBillLapsed:    "the time to pay the first bill is over",
}

// NotPayable tells why the payer may not pay bill b (its Billing loaded)
// now, or "" when it may: a paid or canceled bill, a billing that is over,
// or an installment whose billing still waits for its down payment.
func (b *Bill) NotPayable() string {
	switch {
	case b.Status == BillPaid:
		return NotPayableBillPaid
	case b.Status == BillCanceled:
		return NotPayableBillCanceled
	case b.Billing == nil:
		return ""
	case b.Billing.Status == BillingCanceled:
		return NotPayableBillingCanceled
	case b.Billing.Status == BillingFinished:
		return NotPayableBillingFinished
	case b.Billing.Status == BillingWaitingPayment && b.Type == BillTypeInstallment:
		return NotPayableDownPaymentPending
	}
	return ""
}

// Payable is NotPayable as an invalid_state error, nil when b may be paid.
func (b *Bill) Payable() error {
	if r := b.NotPayable(); r != "" {
		return Errorf(EINVALIDSTATE, "%s", notPayableMessages[r])
	}
	return nil
}

// LivePayment returns the bill's unpaid payment of method that has not
// expired at now, or nil: the one to show instead of issuing another.
func (b *Bill) LivePayment(method string, now time.Time) *Payment {
	for _, p := range b.Payments {
		if p.Method == method && p.Status == PaymentUnpaid && now.Before(p.ExpiresAt) {
			return p
		}
	}
	return nil
}

// BillMethods lists the methods the payer may pay bill b with on its
// checkout: an upfront bill, the configuration's payment_methods; a down
// payment, its allowed_down_payment_methods; a monthly installment, the
// configuration's payment_methods (boleto, whose bolepix form carries a Pix
// code too, and any other the seller listed).
func (pc *PaymentConfiguration) BillMethods(b *Bill) []string {
	if pc.PaymentType == Financed && b.Type == BillTypeDownPayment {
		return pc.AllowedDownPaymentMethods
	}
	return pc.PaymentMethods
}
