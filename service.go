package parcela

import (
	"context"
	"time"
)

// The use cases. Every front door (the API in server, the payer's pages in
// web, the jobs and the CLI) calls these and nothing below them, so a rule
// lives in one place and a handler can be tested on a fake.

// Page selects one page of a listing; Page counts from 1.
type Page struct {
	Page, PerPage int
}

// CatalogService creates and reads a company's products and offers.
type CatalogService interface {
	CreateProduct(ctx context.Context, a Auth, in ProductInput) (*Product, error)
	Product(ctx context.Context, a Auth, id string) (*Product, error)
	Products(ctx context.Context, a Auth, p Page) ([]*Product, int, error)
	UpdateProduct(ctx context.Context, a Auth, id string, in ProductInput) (*Product, error)

	CreateOffer(ctx context.Context, a Auth, req OfferRequest) (*Offer, error)
	Offer(ctx context.Context, a Auth, id string) (*Offer, error)
	Offers(ctx context.Context, a Auth, p Page) ([]*Offer, int, error)
	UpdateOffer(ctx context.Context, a Auth, id string, f OfferFields) (*Offer, error)
}

// OrderService sells: orders are created, charged and canceled.
type OrderService interface {
	CreateOrder(ctx context.Context, a Auth, req OrderRequest) (*Order, error)
	Order(ctx context.Context, a Auth, id string) (*Order, error)
	CancelOrder(ctx context.Context, a Auth, id, reason string) (*Order, error)
	// ChargeOrder creates the order's billing, its bills and the first
	// bill's payment. Racing charges of one order leave one billing.
	ChargeOrder(ctx context.Context, a Auth, id string, req ChargeRequest) (*Order, error)
}

// FormOrderService creates the orders of the payer's forms: the offer
// page's purchase form, sent again (a double click, the Back button, a
// retry after its charge failed), answers the order it created rather
// than create another.
type FormOrderService interface {
	OrderService
	// CreateFormOrder creates an order once per formKey, a key the page
	// makes of its form; the same key again answers the same order.
	// created tells whether this call created it (the page counts an
	// address's orders by it).
	CreateFormOrder(ctx context.Context, a Auth, formKey string, req OrderRequest) (o *Order, created bool, err error)
	// FormOrder reads the order formKey created: not_found when none.
	FormOrder(ctx context.Context, a Auth, formKey string) (*Order, error)
}

// BillingService reads and cancels billings.
type BillingService interface {
	Billing(ctx context.Context, a Auth, id string) (*Billing, error)
	CancelBilling(ctx context.Context, a Auth, id, reason string) (*Billing, error)
}

// BillFilter selects bills for a listing. Dates are instants: midnight of
// the first day and midnight after the last, in São Paulo time.
type BillFilter struct {
	BillingID, OrderID, Status string
	DueFrom, DueTo             *time.Time
	PaidFrom, PaidTo           *time.Time
	Page
}

// BillService reads bills and waives their penalties. A bill comes with the
// company whose rates price its penalties.
type BillService interface {
	Bill(ctx context.Context, a Auth, id string) (*Bill, *Company, error)
	Bills(ctx context.Context, a Auth, f BillFilter) ([]*Bill, int, *Company, error)
	WaivePenalties(ctx context.Context, a Auth, id string, until *time.Time) (*Bill, *Company, error)
}

// Settlement is a bank's notice that a payment was paid.
type Settlement struct {
	PaidAt          *time.Time // default: now; never before the payment was issued, nor in the future
	PaidAmountCents *int64     // default: what is still due (mover.pay)
	// NoticeID is the bank's id of the notice (a Pix's end-to-end id): a
	// notice is applied once per company and environment, and delivered
	// again changes nothing. Empty: a notice without an id, applied as
	// often as it is sent.
	NoticeID string
}

// PaymentService moves payments as the bank reports them (the sandbox plays
// the bank) and finds a payment for its public images.
type PaymentService interface {
	// PayPayment settles a payment and moves its bill, billing and order on.
	// It returns the payment's bill.
	PayPayment(ctx context.Context, a Auth, id string, s Settlement) (*Bill, *Company, error)
	// ExpirePayment expires an unpaid payment. It returns the payment's bill.
	ExpirePayment(ctx context.Context, a Auth, id string) (*Bill, *Company, error)
	// PublicPayment finds a payment of env by its unguessable id alone.
	PublicPayment(ctx context.Context, env Environment, id string) (*Payment, error)
	// PaymentForPayer is PublicPayment with the payment's bill and the
	// company that prices its penalties, for the payment's own page.
	PaymentForPayer(ctx context.Context, env Environment, id string) (*Payment, *Bill, *Company, error)
}

// WebhookService manages a company's webhooks and their delivery log.
type WebhookService interface {
	CreateWebhook(ctx context.Context, a Auth, req WebhookRequest) (*Webhook, error)
	Webhooks(ctx context.Context, a Auth) ([]*Webhook, error)
	Webhook(ctx context.Context, a Auth, id string) (*Webhook, error)
	UpdateWebhook(ctx context.Context, a Auth, id string, req WebhookRequest) (*Webhook, error)
	DeleteWebhook(ctx context.Context, a Auth, id string) error
	RotateWebhookSecret(ctx context.Context, a Auth, id string) (*Webhook, error)
	Deliveries(ctx context.Context, a Auth, webhookID string, p Page) ([]*Delivery, int, error)
	// Delivery reads one delivery with every attempt its log keeps.
	Delivery(ctx context.Context, a Auth, id string) (*Delivery, error)
	// RetryDelivery replays a delivery and returns it.
	RetryDelivery(ctx context.Context, a Auth, id string) (*Delivery, error)
}

// CheckoutService is what the payer's pages do without an API token. Each
// lookup is by an unguessable id and, for personal data, an access code
// compared in constant time; a wrong code is a not_found like a missing id.
// The pages create and charge orders through OrderService with the Auth of
// the offer's company, the same path as the API.
type CheckoutService interface {
	// PublicOffer finds an offer of env by its company's slug, with its
	// product, company and configurations, sellable or not.
	PublicOffer(ctx context.Context, env Environment, companySlug, offerID string) (*Offer, error)
	// OrderForPayer reads an order with its billing, bills and payments.
	OrderForPayer(ctx context.Context, env Environment, orderID, accessCode string) (*Order, error)
	// CheckOrderCode tells whether accessCode opens the order's page
	// (not_found when it does not), reading only the order's key.
	CheckOrderCode(ctx context.Context, env Environment, orderID, accessCode string) error
	// BillForPayer reads a bill with its payments and billing (with its
	// configuration), and the offer that sold it, with its product and
	// company (not its configurations).
	BillForPayer(ctx context.Context, env Environment, billID, authenticationCode string) (*Bill, *Offer, error)
	// IssuePayment issues a payment of method (boleto or pix) for an open
	// bill that has no live payment of that method, or returns the live one.
	IssuePayment(ctx context.Context, env Environment, billID, authenticationCode, method string) (*Payment, error)
	// PayByCard charges a card for an open bill. A refused card is a payment
	// with status refused, not an error.
	PayByCard(ctx context.Context, env Environment, billID, authenticationCode string, card CardPayment) (*Payment, error)
}

// CardPayment is what the payer types on the checkout's card form. It is
// never stored, logged or echoed: only the brand and last four digits are.
type CardPayment struct {
	Number       string
	HolderName   string
	ExpiryMonth  int
	ExpiryYear   int
	CVV          string
	Installments int
	// ShownCents is the amount the payer was shown and agreed to (the
	// checkout's total and its button), 0 when the caller showed none. A
	// card is never charged another: the bill turned late (its fine), or a
	// payment received part of it, between the page and the form sent.
	ShownCents int64
}

// String hides the card so that a stray %v never prints it.
func (CardPayment) String() string { return "CardPayment{…}" }

// TokenService authenticates API tokens.
type TokenService interface {
	Authenticate(ctx context.Context, plainToken string) (*Token, error)
}

// SweepService makes the moves that time causes; the jobs run it
// periodically. Each reports what it moved and the rows it failed on (each
// recorded to be retried later); an error means the sweep itself failed.
type SweepService interface {
	ExpireDuePayments(ctx context.Context) (SweepReport, error)
	MarkOverdue(ctx context.Context) (SweepReport, error)
	IssueDueInstallments(ctx context.Context) (SweepReport, error)
	// RecoverIntents voids payments whose issue was cut short.
	RecoverIntents(ctx context.Context) (SweepReport, error)
	// LapseFirstBills cancels billings whose first bill went unpaid past
	// its due date with nothing to pay it with.
	LapseFirstBills(ctx context.Context) (SweepReport, error)
}

// DeliveryService is the webhook worker's side: what one delivery attempt
// needs, and what it records.
type DeliveryService interface {
	DeliveryWork(ctx context.Context, id string) (*DeliveryWork, error)
	DeliveryWorks(ctx context.Context, ids []string) ([]*DeliveryWork, error)
	RecordAttempt(ctx context.Context, w *DeliveryWork, r AttemptResult) error
	PendingDeliveries(ctx context.Context) (int, error)
}
