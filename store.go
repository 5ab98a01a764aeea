package parcela

import (
	"context"
	"time"
)

// The ports the use cases store through, each no wider than its use case
// needs. The store implements them all (sqldb); handler and use-case tests
// can stand in for any one. Reads take an Auth wherever an entity belongs to
// a company: another company's id is not found, exactly like a missing one.

// ChangeApplier applies a decided Change in one transaction. When a guarded
// row moved since it was read it applies nothing and returns a *Conflict.
type ChangeApplier interface {
	Apply(ctx context.Context, c *Change) error
}

// CompanyReader reads companies.
type CompanyReader interface {
	Company(ctx context.Context, id string) (*Company, error)
}

// CatalogStore stores products and offers.
type CatalogStore interface {
	CompanyReader
	ProductReferences(ctx context.Context) (kinds, shifts map[string]Named, err error)
	CreateProduct(ctx context.Context, p *Product) error
	Product(ctx context.Context, a Auth, id string) (*Product, error)
	Products(ctx context.Context, a Auth, p Page) ([]*Product, int, error)
	// MaxOfferAmount is the highest amount of the product's offers (false: none).
	MaxOfferAmount(ctx context.Context, productID string) (int64, bool, error)
	// UpdateProduct writes p if the stored product is still at p.Version
	// and no offer of it costs more than p's full amount (a *Conflict
	// otherwise); the write moves the version on.
	UpdateProduct(ctx context.Context, p *Product) error
	// CreateOffer stores o if it costs no more than its product's full
	// amount (a *Conflict otherwise: the product was lowered since it was
	// read).
	CreateOffer(ctx context.Context, o *Offer) error
	// Offer reads an offer with its product, the product's company and
	// its configurations.
	Offer(ctx context.Context, a Auth, id string) (*Offer, error)
	Offers(ctx context.Context, a Auth, p Page) ([]*Offer, int, error)
	// SeatsSold counts the charged orders of an offer (sold), and reads in
	// the same snapshot the running count the store keeps of them, if it
	// keeps one (mark; 0 if not), for UpdateOffer (OfferUpdate.MarkWere).
	SeatsSold(ctx context.Context, a Auth, offerID string) (sold, mark int, err error)
	UpdateOffer(ctx context.Context, u OfferUpdate) error
}

// OfferUpdate writes an offer's fields if the offer is still as it was
// read: the same name, availability, expiry and exclude_from_campaign
// (Were), the same limit
// (SeatsWere), and the same seats taken (TakenWere, counted from the sales
// when a limit is set on an offer that had none). A PATCH writes every
// field, so one decided on an older offer would put back what another
// PATCH changed since.
type OfferUpdate struct {
	Offer     *Offer
	Were      OfferState
	SeatsWere *int
	TakenWere int
	// MarkWere is the store's running count read with TakenWere
	// (SeatsSold), when the update gives the offer a limit.
	MarkWere int
}

// OfferState is what a PATCH of an offer may change besides its seats.
type OfferState struct {
	Name                string
	Availability        string
	ExpiresAt           *time.Time
	ExcludeFromCampaign bool
}

// StateOf is o's name, availability, expiry and exclude_from_campaign.
func StateOf(o *Offer) OfferState {
	return OfferState{Name: o.Name, Availability: o.Availability, ExpiresAt: o.ExpiresAt, ExcludeFromCampaign: o.ExcludeFromCampaign}
}

// OrderStore stores orders and the changes of their billings, bills and
// payments.
type OrderStore interface {
	CompanyReader
	ChangeApplier
	// Offer is CatalogStore's.
	Offer(ctx context.Context, a Auth, id string) (*Offer, error)
	City(ctx context.Context, ibgeCode string) (*City, error)
	// CreateOrder stores a new order and its address (whose City is read).
	// An order whose FormKey another order of its company and environment
	// holds is not stored: a *Conflict.
	CreateOrder(ctx context.Context, o *Order) error
	// OrderOfForm is Order for the order created with formKey.
	OrderOfForm(ctx context.Context, a Auth, formKey string) (*Order, error)
	// Order reads an order with its address, offer (product, company,
	// configurations) and billings (configuration, bills, payments).
	Order(ctx context.Context, a Auth, id string) (*Order, error)
	// OrderOfPayment is Order for the order a payment belongs to.
	OrderOfPayment(ctx context.Context, a Auth, paymentID string) (*Order, error)
	Billing(ctx context.Context, a Auth, id string) (*Billing, error)
	IntentStore
}

// IntentStore records each payment before it is issued at the provider,
// in its own committed write, so that no crash loses track of it. Apply
// completes the intent of every payment a change stores (a *Conflict if
// the intent is no longer issuing).
type IntentStore interface {
	// NextNossoNumero hands out a never-repeated boleto number; it is
	// called outside any transaction.
	NextNossoNumero(ctx context.Context) (int64, error)
	// RecordIntent stores an intent, issuing.
	RecordIntent(ctx context.Context, in *PaymentIntent) error
	// StartVoid moves an issuing (or voiding) intent to voiding at at; an
	// intent completed or voided already is a *Conflict.
	StartVoid(ctx context.Context, id string, at time.Time) error
	// FinishVoid moves a voiding intent to voided at at.
	FinishVoid(ctx context.Context, id string, at time.Time) error
}

// BillStore reads bills and stores their changes.
type BillStore interface {
	ChangeApplier
	// Bill reads a bill with its payments and billing summary, and the
	// company whose rates and payment expiry price what it owes (a late
	// Pix is priced for the day the expiry ends on: Bill.pricedAt).
	Bill(ctx context.Context, a Auth, id string) (*Bill, *Company, error)
	Bills(ctx context.Context, a Auth, f BillFilter) ([]*Bill, int, *Company, error)
	// Order is OrderStore's: a waiver that pays a bill moves its billing
	// and order on.
	Order(ctx context.Context, a Auth, id string) (*Order, error)
}

// PaymentStore is what the payment use cases read and write.
type PaymentStore interface {
	OrderStore
	BillStore
	PublicPayment(ctx context.Context, env Environment, id string) (*Payment, error)
	// SettlementNotice finds a notice the caller's bank applied, by the
	// bank's id of it (not_found when none).
	SettlementNotice(ctx context.Context, a Auth, noticeID string) (*SettlementNotice, error)
}

// CheckoutStore is what the payer's pages read and write. The payer has
// no token: an order or a bill is found by its id in an environment, with
// the secret code that opens its page, which the use case compares.
type CheckoutStore interface {
	OrderStore
	BillStore
	CompanyReader
	// PublicOffer finds the offer id of env whose company's links carry
	// slug, with its product, company and configurations.
	PublicOffer(ctx context.Context, env Environment, slug, id string) (*Offer, error)
	// OrderKey finds an order of env: its owner and access code.
	OrderKey(ctx context.Context, env Environment, id string) (PayerKey, error)
	// BillKey finds a bill of env: its owner, order, the order's offer and
	// the bill's authentication code.
	BillKey(ctx context.Context, env Environment, id string) (PayerKey, error)
	// RecordCardIntent records a card attempt's intent as RecordIntent
	// does, unless the intent's bill has had limit.Max refused card
	// payments created after limit.Since, counting the card intents of the
	// bill still issuing (attempts in flight): then it records nothing and
	// returns ErrCardAttemptsExhausted. Attempts on one bill are counted
	// one after the other, on every instance.
	RecordCardIntent(ctx context.Context, in *PaymentIntent, limit CardAttemptLimit) error
	// PayerBill finds a bill of env for its payer: its key, as BillKey,
	// which opens judges (the code the payer sent); then, if it opens, the
	// bill as Bill reads it, its billing with the billing's configuration,
	// and its order's offer with its product and company (not its
	// configurations). A key that does not open is not_found, and nothing
	// of the bill is returned.
	PayerBill(ctx context.Context, env Environment, id string, opens func(PayerKey) bool) (*Bill, *Offer, error)
}

// PayerKey is what opens an order's or a bill's page: the entity's owner,
// its order, and its secret code.
type PayerKey struct {
	Owned
	OrderID string
	OfferID string // set by BillKey
	Code    string
}

// Owned is an entity id with the company and environment it belongs to.
type Owned struct {
	ID   string
	Auth Auth
}

// Due selects rows that time has made due at Now: at most Limit of them,
// of the given companies only when Companies is set, taken in turns
// between companies (each one's first due row, then each one's second),
// so that one company's backlog does not hold the others' rows.
type Due struct {
	Now       time.Time
	Companies []string
	Limit     int
}

// DueRow is a row a sweep selected: its id and owner, the bill it
// concerns, and how many times in a row the sweep failed on it.
type DueRow struct {
	Owned
	BillID   string
	Failures int
}

// SweepStore finds what the clock has made due. A sweep decides each row
// again on a fresh read. Every selection leaves out the rows the sweep
// failed on whose retry time (RecordSweepFailure) is still to come.
type SweepStore interface {
	PaymentStore
	// ExpiredPayments are unpaid payments whose expiry is not after now.
	ExpiredPayments(ctx context.Context, d Due) ([]DueRow, error)
	// LateInstallments are pending installments of active billings whose
	// effective due date is before now and that have an unpaid payment.
	LateInstallments(ctx context.Context, d Due) ([]DueRow, error)
	// InstallmentsToIssue are open installments of active billings, inside
	// their company's issue window at now, with no live payment.
	InstallmentsToIssue(ctx context.Context, d Due) ([]DueRow, error)
	// StaleIntents are intents issuing or voiding, untouched since before
	// before.
	StaleIntents(ctx context.Context, d Due, before time.Time) ([]DueRow, error)
	// RecordSweepFailure records that f.Sweep failed on f.Row for the
	// f.Failures-th time in a row, to be retried at f.Retry.
	RecordSweepFailure(ctx context.Context, f SweepFailure) error
	// ClearSweepFailure forgets the failures of a row in a sweep once it
	// succeeded.
	ClearSweepFailure(ctx context.Context, sweep, id string) error
	// LapsedFirstBills are pending first bills of billings waiting for
	// them, due at or before now, with no unpaid or paid payment.
	LapsedFirstBills(ctx context.Context, d Due) ([]DueRow, error)
}

// WebhookStore stores webhooks and reads their deliveries.
type WebhookStore interface {
	// CreateWebhook stores w if its company has fewer than limit webhooks
	// in w's environment (a *Conflict otherwise), counted so that
	// concurrent creations cannot pass the limit together.
	CreateWebhook(ctx context.Context, w *Webhook, limit int) error
	Webhooks(ctx context.Context, a Auth) ([]*Webhook, error)
	Webhook(ctx context.Context, a Auth, id string) (*Webhook, error)
	// UpdateWebhook writes w's settings (name, url, events, verb) if the
	// stored ones are still were (a *Conflict otherwise), and its state
	// (enabled, why not, failing since) only if state; never its secrets.
	UpdateWebhook(ctx context.Context, w *Webhook, were WebhookSettings, state bool) error
	// RotateWebhookSecret writes w's secrets if its secret is still from
	// (a *Conflict otherwise).
	RotateWebhookSecret(ctx context.Context, w *Webhook, from string) error
	// DeleteWebhook marks a webhook deleted at at (not found if it was).
	DeleteWebhook(ctx context.Context, a Auth, id string, at time.Time) error
	// Deliveries lists a's deliveries, of webhookID when not "", whether
	// or not it was deleted (not found when it is no webhook of a's).
	Deliveries(ctx context.Context, a Auth, webhookID string, p Page) ([]*Delivery, int, error)
	Delivery(ctx context.Context, a Auth, id string) (*Delivery, error)
	// RetryDelivery queues d again as its next generation, at at, if it is
	// still at d.Generation (a *Conflict otherwise), with its retry
	// schedule started over.
	RetryDelivery(ctx context.Context, d *Delivery, at time.Time) error
}

// DeliveryStore is the webhook worker's side of the store.
type DeliveryStore interface {
	DeliveryWork(ctx context.Context, id string) (*DeliveryWork, error)
	DeliveryWorks(ctx context.Context, ids []string) ([]*DeliveryWork, error)
	RecordAttempt(ctx context.Context, r AttemptRecord) error
	PendingDeliveries(ctx context.Context) (int, error)
}

// TokenStore finds tokens by the hash of their secret.
type TokenStore interface {
	TokenByHash(ctx context.Context, hash string) (*Token, error)
}

// Store is every port at once: what the store implements.
type Store interface {
	CatalogStore
	SweepStore
	CheckoutStore
	WebhookStore
	DeliveryStore
	TokenStore
}

// PublicLinks gives each environment's public addresses, for the forms
// that events carry.
type PublicLinks interface {
	Links(env Environment) Links
}

// LinksByEnvironment is a fixed PublicLinks.
type LinksByEnvironment map[Environment]Links

// Links returns the addresses of env.
func (l LinksByEnvironment) Links(env Environment) Links { return l[env] }
