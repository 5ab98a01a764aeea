package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"parcela"
	"parcela/sqldb"
)

// demoSetup is what the demo creates.
type demoSetup struct {
	CompanyID   string `json:"company_id"`
	CompanySlug string `json:"company_slug"`
	TokenID     string `json:"token_id"`
	Token       string `json:"token"`
	ProductID   string `json:"product_id"`
	OfferID     string `json:"offer_id"`
	// Configuration ids: one upfront (pix or boleto), one financed (bolepix).
	UpfrontConfigurationID  string `json:"upfront_payment_configuration_id"`
	FinancedConfigurationID string `json:"financed_payment_configuration_id"`
}

// errDemoTaken is setUpDemo's answer when another process, starting at the
// same moment, created the demo company first.
var errDemoTaken = errors.New("the database already has a company; the demo only sets up an empty database")

// setUpDemo creates a demo company with a sandbox token, a product and an
// offer, all in one transaction (sqldb.CreateCompanyWith): a failure or a
// crash halfway leaves nothing, and the next start sets the demo up whole,
// where a company left without its offer (and a token never shown) was
// taken by every later start for a database already set up. A signal
// does not stop it either.
func setUpDemo(ctx context.Context, db *sqldb.DB) (*demoSetup, error) {
	ctx = context.WithoutCancel(ctx)
	c := parcela.NewCompany("Escola Demonstração", "11222333000181", "demo")
	email, phone := "contato@demo.parcela.dev", "11987654321"
	c.Email, c.Phone = &email, &phone
	complement := "Sala 42"
	c.Address = &parcela.Address{Zipcode: "01310100", Street: "Avenida Paulista", Number: "1000", Complement: &complement,
		Neighborhood: "Bela Vista", City: parcela.City{IBGECode: "3550308"}}
	kinds, shifts, err := db.ProductReferences(ctx)
	if err != nil {
		return nil, err
	}
	var p *parcela.Product
	var o *parcela.Offer
	catalog := func(c *parcela.Company) ([]*parcela.Product, []*parcela.Offer, error) {
		a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
		now := parcela.SystemClock{}.Now()
		name, amount, kind, access, days := "Curso de Confeitaria Profissional", int64(240000), "course", parcela.AccessDays, 365
		desc := "Do básico ao avançado, com certificado."
		var err error
		if p, err = parcela.NewProduct(a, parcela.ProductInput{Name: &name, FullAmountCents: &amount, Kind: &kind, AccessPeriod: &access,
			DurationInDays: &days, Description: &desc}, kinds, shifts, now); err != nil {
			return nil, nil, err
		}
		offerName, price := "Turma regular", int64(199000)
		upfront, financed := parcela.Upfront, parcela.Financed
		// Cards on the payer's pages: upfront, and for the down payment; the
		// installments are boletos with a Pix code (bolepix), or a Pix.
		upMethods, dpMethods, installmentMethods := []string{"pix", "boleto", "credit_card"}, []string{"pix", "boleto", "credit_card"}, []string{"boleto", "pix"}
		dpType, dpValue, interest, maxInst := "percentage", parcela.MustRate("0.2"), parcela.MustRate("0.0199"), 12
		if o, err = parcela.NewOffer(a, parcela.OfferRequest{
			Offer: parcela.OfferFields{Name: &offerName, ProductID: &p.ID, AmountCents: &price},
			PaymentConfigurations: &[]parcela.PaymentConfigurationRequest{
				{PaymentType: &upfront, PaymentMethods: &upMethods},
				{PaymentType: &financed, PaymentMethods: &installmentMethods, AllowedDownPaymentMethods: &dpMethods, DownPaymentType: &dpType,
					DownPaymentValue: &dpValue, InterestRate: &interest, MaxInstallments: &maxInst},
			},
		}, c, p, now); err != nil {
			return nil, nil, err
		}
		return []*parcela.Product{p}, []*parcela.Offer{o}, nil
	}
	t, plain, err := db.CreateCompanyWith(ctx, &c, parcela.Sandbox, catalog)
	if slugTaken(err) {
		return nil, errDemoTaken
	} else if err != nil {
		return nil, err
	}
	return &demoSetup{CompanyID: c.ID, CompanySlug: c.Slug, TokenID: t.ID, Token: plain, ProductID: p.ID, OfferID: o.ID,
		UpfrontConfigurationID: o.PaymentConfigurations[0].ID, FinancedConfigurationID: o.PaymentConfigurations[1].ID}, nil
}

func printDemo(w io.Writer, d *demoSetup, sandboxURL string) {
	fmt.Fprintf(w, "demo company %s\nsandbox token (shown once): %s\n", d.CompanyID, d.Token)
	fmt.Fprintf(w, "product %s\noffer %s (upfront configuration %s, financed configuration %s)\n",
		d.ProductID, d.OfferID, d.UpfrontConfigurationID, d.FinancedConfigurationID)
	fmt.Fprintf(w, "offer page: %s\n", parcela.Links{PublicURL: sandboxURL}.OfferURL(d.CompanySlug, d.OfferID))
	fmt.Fprintf(w, "try: curl -s -H 'Authorization: Bearer %s' %s/external_api/v1/offers/%s\n", d.Token, sandboxURL, d.OfferID)
}

func cmdDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbFlag := newFlags("demo", stderr)
	asJSON := fs.Bool("json", false, "print the created ids and token as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	db, err := openDB(ctx, *dbFlag, getenv, sqldb.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.CountCompanies(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		return errDemoTaken
	}
	d, err := setUpDemo(ctx, db)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(d)
	}
	// Trimmed as serve trims it: "https://host/" made links of "//pay/…", which 404.
	url := strings.TrimRight(envOr(getenv, "PARCELA_SANDBOX_PUBLIC_URL", localURL(envOr(getenv, "PARCELA_SANDBOX_ADDR", "127.0.0.1:8081"))), "/")
	printDemo(stdout, d, url)
	return nil
}

// localURL is the address a person on this machine reaches a listener of
// addr at: an address of every interface (":8081", "0.0.0.0:8081") made
// "http://:8081", which no browser or curl opens.
func localURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// slugTaken tells the store's refusal of a company whose slug another
// took (a racing start's demo) from its other conflicts: a transaction
// still colliding after its retries is a 409 conflict too, and was read
// as a demo already there when none was.
func slugTaken(err error) bool {
	var e *parcela.Error
	return errors.As(err, &e) && e.Code == parcela.ECONFLICT && slices.ContainsFunc(e.Fields, func(f parcela.FieldError) bool {
		return f.Field == "slug" && f.Code == "taken"
	})
}
