package client_test

// The in-process server the client's tests and examples talk to: the same
// wiring as the server's own tests (server/setup_test.go). It is all in this
// one file, so a change of the server's constructors is adapted here only.

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"parcela"
	"parcela/api"
	"parcela/bank"
	"parcela/client"
	"parcela/jobs"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

func TestMain(m *testing.M) { sqldbtest.Main(m) }

// start is the test clock's starting point: a Saturday afternoon in São Paulo.
var start = time.Date(2026, 11, 21, 15, 30, 0, 0, parcela.SaoPaulo)

const (
	sandboxPublicURL    = "https://sandbox.parcela.test"
	productionPublicURL = "https://api.parcela.test"
)

// bundle is what a test gets from setup: a store, its clock, both
// listeners, and a company with a token for each.
type bundle struct {
	db         *sqldb.DB
	enq        *jobs.Enqueuer
	app        *parcela.Services
	sweeps     *parcela.Sweeps
	clock      *parcela.TestClock
	sandbox    *httptest.Server
	production *httptest.Server
	token      string // sandbox
	prodToken  string
}

func setup(t *testing.T, e sqldb.Dialect) *bundle {
	t.Helper()
	clock := parcela.NewTestClock(start)
	// Each test works its own delivery queue on the shared PostgreSQL database.
	enq, err := jobs.NewEnqueuer("webhooks_" + sqldbtest.Suffix())
	if err != nil {
		t.Fatal(err)
	}
	db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock, Enqueuer: enq})
	b := listen(db, enq, clock)
	t.Cleanup(b.sandbox.Close)
	t.Cleanup(b.production.Close)
	company := sqldbtest.Company(t, db)
	b.sweeps = b.app.Sweeps.Only(company.ID)
	b.token = sqldbtest.Token(t, db, company.ID, parcela.Sandbox)
	b.prodToken = sqldbtest.Token(t, db, company.ID, parcela.Production)
	return b
}

// listen starts both listeners on db.
func listen(db *sqldb.DB, enq *jobs.Enqueuer, clock *parcela.TestClock) *bundle {
	links := parcela.LinksByEnvironment{parcela.Sandbox: {PublicURL: sandboxPublicURL}, parcela.Production: {PublicURL: productionPublicURL}}
	app := parcela.NewServices(db, bank.NewSimulated(), nil, clock, links)
	svc := server.ServicesOf(app, db)
	return &bundle{
		db: db, enq: enq, app: app, sweeps: app.Sweeps, clock: clock,
		sandbox:    httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Sandbox, Clock: clock, PublicURL: sandboxPublicURL, OpenAPI: api.Spec})),
		production: httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Production, Clock: clock, PublicURL: productionPublicURL, OpenAPI: api.Spec})),
	}
}

// each runs fn on every engine with its own bundle.
func each(t *testing.T, fn func(t *testing.T, b *bundle)) {
	t.Helper()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, e))
		})
	}
}

// deliverWebhooks runs the job queue, so that webhooks reach receivers on
// this machine.
func (b *bundle) deliverWebhooks(t *testing.T) {
	t.Helper()
	q, err := jobs.New(b.db, b.enq, jobs.App{Sweeps: b.sweeps, Deliveries: b.app.Deliveries, Upkeep: b.db, Provider: b.app.Provider}, jobs.Config{Clock: b.clock,
		PollInterval: 20 * time.Millisecond, NoPeriodic: true, WebhookAllowedCIDRs: "127.0.0.0/8", NoJitter: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("stop the job queue: %v", err)
		}
	})
}

// exampleSandbox is a sandbox listener with a fresh SQLite database and a
// token, for the examples, which have no *testing.T. Close stops it and
// removes the database.
type exampleSandbox struct {
	URL, Token string
	close      func()
}

func (s *exampleSandbox) Close() { s.close() }

func startSandbox() *exampleSandbox {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "parcela-client-example-")
	if err != nil {
		panic(err)
	}
	clock := parcela.NewTestClock(start)
	enq, err := jobs.NewEnqueuer("")
	if err != nil {
		panic(err)
	}
	db, err := sqldb.Open(ctx, "sqlite:"+filepath.Join(dir, "parcela.db"), sqldb.Config{Clock: clock, Enqueuer: enq})
	if err != nil {
		panic(err)
	}
	if err := db.Migrate(ctx); err != nil {
		panic(err)
	}
	company := parcela.NewCompany("Escola Exemplo", "11222333000181", "escola-exemplo")
	if err := db.CreateCompany(ctx, &company); err != nil {
		panic(err)
	}
	_, token, err := db.CreateToken(ctx, company.ID, parcela.Sandbox)
	if err != nil {
		panic(err)
	}
	b := listen(db, enq, clock)
	return &exampleSandbox{URL: b.sandbox.URL, Token: token, close: func() {
		b.sandbox.Close()
		b.production.Close()
		db.Close()
		if err := os.RemoveAll(dir); err != nil {
			panic(err)
		}
	}}
}

// PublicURL is the address the sandbox puts in links and problem types.
func (s *exampleSandbox) PublicURL() string { return sandboxPublicURL }

// ChargedOrder creates a product, an offer and an order in the sandbox, and
// charges the order financed in 4 bills with a Pix down payment; it
// returns the order's id.
func (s *exampleSandbox) ChargedOrder() string {
	c, err := client.New(s.URL, s.Token)
	if err != nil {
		panic(err)
	}
	id, err := chargeDueOn(c, 10)
	if err != nil {
		panic(err)
	}
	return id
}

// chargeDueOn sells one financed order through c (4 bills, a Pix down
// payment, the installments due on dueDay) and returns its id.
func chargeDueOn(c *client.Client, dueDay int) (string, error) {
	ctx := context.Background()
	product, err := c.CreateProductWithResponse(ctx, nil, client.ProductCreateRequest{Product: client.ProductCreateInput{Name: "Curso", FullAmountCents: 150000}})
	if err != nil {
		return "", err
	}
	offer, err := c.CreateOfferWithResponse(ctx, nil, client.OfferCreateRequest{
		Offer: client.OfferInput{Name: "Turma", ProductId: product.JSON201.Id, AmountCents: 120000},
		PaymentConfigurations: []client.PaymentConfigurationRequest{{
			PaymentType: client.PaymentTypeFinanced, AllowedDownPaymentMethods: &[]client.PaymentMethod{client.PaymentMethodPix},
			DownPaymentType: client.Ptr(client.DownPaymentTypePercentage), DownPaymentValue: client.Ptr(json.Number("0.2")),
			MaxInstallments: client.Ptr(12),
		}},
	})
	if err != nil {
		return "", err
	}
	order, err := c.CreateOrderWithResponse(ctx, nil, client.OrderCreateRequest{Order: client.OrderInput{
		OfferId: offer.JSON201.Id, CustomerName: "Maria da Silva", CustomerBirthdate: "1990-05-17",
		CustomerDocument: "52998224725", Email: "maria@example.com", Phone: "11987654321",
		Address: client.AddressInput{Zipcode: "01310100", Street: "Avenida Paulista", Number: "1000", Neighborhood: "Bela Vista", CityIbgeCode: "3550308"},
	}})
	if err != nil {
		return "", err
	}
	if _, err := c.ChargeOrderWithResponse(ctx, order.JSON201.Id, nil, client.ChargeRequest{
		PaymentConfigurationId: offer.JSON201.PaymentConfigurations[0].Id, DueDay: dueDay, Installments: 4,
		Payment:   client.ChargePayment{PaymentMethod: client.ChargePaymentPaymentMethodPix},
		Signature: client.ChargeSignature{RemoteIp: "203.0.113.7", UserAgent: "example"},
	}); err != nil {
		return "", err
	}
	return order.JSON201.Id, nil
}
