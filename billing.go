package parcela

import "time"

// Billing statuses.
const (
	BillingWaitingPayment = "waiting_payment"
	BillingActive         = "active"
	BillingFinished       = "finished"
	BillingCanceled       = "canceled"
)

// Bill statuses.
const (
	BillPending  = "pending"
	BillPaid     = "paid"
	BillOverdue  = "overdue"
	BillCanceled = "canceled"
)

// Payment statuses.
const (
	PaymentUnpaid   = "unpaid"
	PaymentPaid     = "paid"
	PaymentExpired  = "expired"
	PaymentCanceled = "canceled"
)

// Billing is the financial plan of a charged order: its bills.
type Billing struct {
	ID                     string
	CompanyID              string
	Environment            Environment
	OrderID                string
	PaymentConfigurationID string
	OriginBillingID        *string
	AmountCents            int64
	DueDay                 int
	Installments           int
	Status                 string
	CancelationReason      *string
	FinishedAt             *time.Time
	Version                int64 // moves with every change of the billing, its bills or payments
	SignatureRemoteIP      string
	SignatureUserAgent     string
	CreatedAt              time.Time
	UpdatedAt              time.Time
	PaymentConfiguration   *PaymentConfiguration
	Bills                  []*Bill
	// Disclosed is the plan's cost as computed when it was charged
	// (Schedule's totals and CET), when the caller has it: stored with the
	// billing, or from the ChargePlan. Without it, Cost derives the same
	// figures from Bills.
	Disclosed *Cost
	// planned is the charge's plan's cost, for the forms the charge renders
	// (its events and its answer): the same figures Cost derives from the
	// bills, without solving for the CET once per form. Unlike Disclosed it
	// shows in no bill's billing summary.
	planned *Cost
}

// Bill is one amount due on a date: the down payment or an installment.
type Bill struct {
	ID                    string
	CompanyID             string
	Environment           Environment
	BillingID             string
	OrderID               string
	Number                int
	Type                  BillType
	Status                string
	AmountCents           int64 // the original amount
	DueDate               time.Time
	EffectiveDueDate      time.Time
	DisablePenaltiesUntil *time.Time
	PaidAt                *time.Time
	AuthenticationCode    string
	Details               BillDetails
	CreatedAt             time.Time
	UpdatedAt             time.Time
	Payments              []*Payment
	Billing               *Billing // the summary, on bill endpoints
}

// Payment is one way of paying a bill: a boleto, a Pix charge or a card
// attempt.
type Payment struct {
	ID                       string
	CompanyID                string
	Environment              Environment
	BillID                   string
	Method                   string
	Status                   string
	AmountCents              int64
	PaidAmountCents          int64
	RefundedAmountCents      int64
	PaidAt                   *time.Time
	RefundedAt               *time.Time
	ExpiresAt                time.Time
	Installments             int
	NossoNumero              *string
	Barcode                  *string // linha digitável or Pix copy-and-paste code
	BarcodeDigits            *string // the 44-digit boleto barcode
	PixCode                  *string // the Pix code of a bolepix boleto
	RefusedReason            *string
	RefusedReasonDescription *string
	Card                     *CardSummary // a card attempt's brand and last four digits
	CreatedAt                time.Time
	UpdatedAt                time.Time
}

// Penalty of the bill at now under the company's fine and interest rates:
// an open bill's penaltyAt, which every payment issued for it carries, so
// what the bill shows is what it is asked to pay.
func (b *Bill) Penalty(now time.Time, c *Company) Penalty {
	if !b.open() {
		return Penalty{}
	}
	return b.penaltyAt(now, c)
}
