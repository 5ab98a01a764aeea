package parcela

// Services are the use cases wired over one store, ready for the front
// doors.
type Services struct {
	Catalog    *Catalog
	Orders     *Orders
	Billings   *Billings
	Bills      *Bills
	Payments   *Payments
	Webhooks   *Webhooks
	Tokens     *Tokens
	Sweeps     *Sweeps
	Deliveries *Deliveries
	Checkout   *Checkout
	// Provider is the provider the use cases issue and void through, card
	// approvals voided with it (VoidingCards): the jobs void canceled
	// payments with it (Change.Voids).
	Provider PaymentProvider
}

// NewServices wires every use case over store. provider issues payments
// (ProvidersByEnvironment gives each environment its own); acquirers charge
// cards in the environments they serve; links address the forms that
// events carry.
func NewServices(store Store, provider PaymentProvider, acquirers AcquirersByEnvironment, clock Clock, links PublicLinks) *Services {
	provider = VoidingCards(provider, acquirers)
	payments := NewPayments(store, provider, clock, links)
	return &Services{
		Catalog:    NewCatalog(store, clock),
		Orders:     NewOrders(store, provider, clock, links),
		Billings:   NewBillings(store, clock, links),
		Bills:      NewBills(store, payments, clock, links),
		Payments:   payments,
		Webhooks:   NewWebhooks(store, clock),
		Tokens:     NewTokens(store),
		Sweeps:     NewSweeps(store, payments, clock, links),
		Deliveries: NewDeliveries(store, clock),
		Checkout:   NewCheckout(store, provider, acquirers, clock, links),
		Provider:   provider,
	}
}
