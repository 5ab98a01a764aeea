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
	SignatureRemoteIP      string
	SignatureUserAgent     string
	CreatedAt              time.Time
	UpdatedAt              time.Time
	PaymentConfiguration   *PaymentConfiguration
	Bills                  []*Bill
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

// Payment is one way of paying a bill: a boleto or a Pix charge.
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
	CreatedAt                time.Time
	UpdatedAt                time.Time
}

// Penalty of the bill at now under the company's fine and interest rates.
func (b *Bill) Penalty(now time.Time, c *Company) Penalty {
	if b.Status == BillPaid || b.Status == BillCanceled {
		return Penalty{}
	}
	return LatePenalty(b.AmountCents, b.EffectiveDueDate, b.DisablePenaltiesUntil, now, c.FineRate, c.MonthlyInterestRate)
}
