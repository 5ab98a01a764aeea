package sqldb_test

import (
	"reflect"
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// The payer's pages read an offer with its company, product and
// configurations in one statement; it must read what the caller's read
// (Offer) does, whose company is what Company reads.
func TestPublicOfferReadsTheOfferAndItsCompany(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		want := b.readOffer(b.offer.ID)
		got, err := b.db.PublicOffer(b.ctx, parcela.Sandbox, b.c.Slug, b.offer.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("public offer\n%+v\nwant\n%+v", got, want)
		}
		if len(got.PaymentConfigurations) != 2 || got.PaymentConfigurations[0].Position > got.PaymentConfigurations[1].Position {
			t.Fatalf("configurations %+v", got.PaymentConfigurations)
		}
		for _, c := range []struct{ env, slug, id string }{
			{string(parcela.Production), b.c.Slug, b.offer.ID},
			{string(parcela.Sandbox), b.c.Slug + "-other", b.offer.ID},
			{string(parcela.Sandbox), b.c.Slug, parcela.NewID()},
		} {
			if _, err := b.db.PublicOffer(b.ctx, parcela.Environment(c.env), c.slug, c.id); parcela.ErrorCode(err) != parcela.ENOTFOUND {
				t.Errorf("%+v: %v, want not_found", c, err)
			}
		}
		// The caller's own read: another company's or environment's offer
		// is not found, exactly like a missing one.
		other := sqldbtest.Company(t, b.db)
		for _, a := range []parcela.Auth{{CompanyID: other.ID, Environment: parcela.Sandbox}, {CompanyID: b.c.ID, Environment: parcela.Production}} {
			if _, err := b.db.Offer(b.ctx, a, b.offer.ID); parcela.ErrorCode(err) != parcela.ENOTFOUND {
				t.Errorf("offer read as %+v: %v, want not_found", a, err)
			}
		}
	})
}

// A company's address and an offer without configurations are read too.
func TestPublicOfferWithAddressAndNoConfigurations(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		c := parcela.NewCompany("Escola Com Endereço", "11222333000181", "endereco-"+sqldbtest.Suffix())
		c.Address = &parcela.Address{Zipcode: "20040002", Street: "Rua da Assembleia", Number: "10", Neighborhood: "Centro",
			City: parcela.City{IBGECode: "3304557"}}
		if err := b.db.CreateCompany(b.ctx, &c); err != nil {
			t.Fatal(err)
		}
		b.c, b.a = &c, parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
		p, err := b.app.Catalog.CreateProduct(b.ctx, b.a, fromJSON[parcela.ProductInput](t, `{"name": "Curso", "full_amount_cents": 150000, "kind": "course"}`))
		if err != nil {
			t.Fatal(err)
		}
		sold, err := b.app.Catalog.CreateOffer(b.ctx, b.a, fromJSON[parcela.OfferRequest](t, `{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
			"payment_configurations": [{"payment_type": "upfront", "payment_methods": ["pix"], "expires_in_hours": 48}]}`))
		if err != nil {
			t.Fatal(err)
		}
		bare := *sold
		bare.ID, bare.PaymentConfigurations = parcela.NewID(), nil
		if err := b.db.CreateOffer(b.ctx, &bare); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{sold.ID, bare.ID} {
			want := b.readOffer(id)
			if want.Product.Company.Address == nil {
				t.Fatal("the company has no address")
			}
			got, err := b.db.PublicOffer(b.ctx, parcela.Sandbox, b.c.Slug, id)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("public offer\n%+v\nwant\n%+v", got, want)
			}
		}
		// An order's offer and a checkout's read the company's address in
		// the offer's row too.
		company, err := b.db.Company(b.ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		b.offer = sold
		o := b.order()
		o, err = b.app.Orders.ChargeOrder(b.ctx, b.a, o.ID, fromJSON[parcela.ChargeRequest](t, `{"payment_configuration_id": "`+sold.PaymentConfigurations[0].ID+`",
			"due_day": 10, "installments": 1, "payment": {"payment_method": "pix"}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`))
		if err != nil {
			t.Fatal(err)
		}
		read, err := b.db.Order(b.ctx, b.a, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(read.Offer.Product.Company, company) {
			t.Fatalf("the order's company\n%+v\nwant\n%+v", read.Offer.Product.Company, company)
		}
		_, offer, err := b.db.PayerBill(b.ctx, parcela.Sandbox, o.Billings[0].Bills[0].ID, func(parcela.PayerKey) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(offer.Product.Company, company) {
			t.Fatalf("the checkout's company\n%+v\nwant\n%+v", offer.Product.Company, company)
		}
	})
}

// A checkout reads the bill's key, then, if the key opens, the bill as
// Bill reads it, its billing's configuration and its offer. A key that
// does not open is not_found, as an id of another environment is.
func TestPayerBillReadsTheKeyTheBillAndTheOffer(t *testing.T) {
	eachCheckout(t, func(t *testing.T, b *checkoutBundle) {
		o := b.charge(3, parcela.MethodPix)
		bill := o.Billings[0].Bills[1]
		wantKey, err := b.db.BillKey(b.ctx, parcela.Sandbox, bill.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantBill, _, err := b.db.Bill(b.ctx, b.a, bill.ID)
		if err != nil {
			t.Fatal(err)
		}
		var k parcela.PayerKey
		got, offer, err := b.db.PayerBill(b.ctx, parcela.Sandbox, bill.ID, func(key parcela.PayerKey) bool { k = key; return true })
		if err != nil {
			t.Fatal(err)
		}
		if k != wantKey || k.Code == "" || k.OfferID != b.offer.ID {
			t.Fatalf("key %+v, want %+v", k, wantKey)
		}
		want := b.readOffer(b.offer.ID)
		var wantConfig *parcela.PaymentConfiguration
		for _, c := range want.PaymentConfigurations {
			if c.ID == o.Billings[0].PaymentConfigurationID {
				wantConfig = c
			}
		}
		want.PaymentConfigurations = nil
		if !reflect.DeepEqual(offer, want) {
			t.Fatalf("offer\n%+v\nwant\n%+v", offer, want)
		}
		if wantConfig == nil || !reflect.DeepEqual(got.Billing.PaymentConfiguration, wantConfig) {
			t.Fatalf("configuration\n%+v\nwant\n%+v", got.Billing.PaymentConfiguration, wantConfig)
		}
		got.Billing.PaymentConfiguration = nil
		if !reflect.DeepEqual(got, wantBill) {
			t.Fatalf("bill\n%+v\nwant\n%+v", got, wantBill)
		}
		// The down payment, with its Pix.
		down := o.Billings[0].Bills[0]
		if wantBill, _, err = b.db.Bill(b.ctx, b.a, down.ID); err != nil {
			t.Fatal(err)
		}
		if got, _, err = b.db.PayerBill(b.ctx, parcela.Sandbox, down.ID, func(parcela.PayerKey) bool { return true }); err != nil {
			t.Fatal(err)
		}
		got.Billing.PaymentConfiguration = nil
		if len(got.Payments) == 0 || !reflect.DeepEqual(got, wantBill) {
			t.Fatalf("down payment\n%+v\nwant\n%+v", got, wantBill)
		}
		asked := false
		got, offer, err = b.db.PayerBill(b.ctx, parcela.Sandbox, bill.ID, func(parcela.PayerKey) bool { asked = true; return false })
		if parcela.ErrorCode(err) != parcela.ENOTFOUND || !asked || got != nil || offer != nil {
			t.Errorf("a key that does not open: %v, %v, asked %v, %v; want not_found", got, offer, asked, err)
		}
		for _, c := range []struct {
			env parcela.Environment
			id  string
		}{{parcela.Production, bill.ID}, {parcela.Sandbox, parcela.NewID()}} {
			_, _, err := b.db.PayerBill(b.ctx, c.env, c.id, func(parcela.PayerKey) bool {
				t.Errorf("%+v: a key asked of a bill not found", c)
				return true
			})
			if parcela.ErrorCode(err) != parcela.ENOTFOUND {
				t.Errorf("%+v: %v, want not_found", c, err)
			}
		}
	})
}

// readOffer reads an offer as the company's API does, with its company.
func (b *checkoutBundle) readOffer(id string) *parcela.Offer {
	b.t.Helper()
	o, err := b.db.Offer(b.ctx, b.a, id)
	if err != nil {
		b.t.Fatal(err)
	}
	// Offer reads the company with the offer: it must be what Company reads.
	c, err := b.db.Company(b.ctx, b.c.ID)
	if err != nil {
		b.t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Product.Company, c) {
		b.t.Fatalf("the offer's company\n%+v\nwant\n%+v", o.Product.Company, c)
	}
	return o
}

// BenchmarkPublicOffer reads the offer page's offer (two configurations,
// as the harness's) by its company's slug, and as its owner's API reads it
// (Offer, the same statement by the company's id).
func BenchmarkPublicOffer(b *testing.B) {
	for _, e := range sqldbtest.Engines() {
		b.Run(string(e), func(b *testing.B) {
			db := sqldbtest.Open(b, e, sqldb.Config{Enqueuer: quietEnqueuer{}})
			app := sqldbtest.Services(db, nil)
			c := sqldbtest.Company(b, db)
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
			p, err := app.Catalog.CreateProduct(b.Context(), a, fromJSON[parcela.ProductInput](b, `{"name": "Curso", "full_amount_cents": 150000, "kind": "course"}`))
			if err != nil {
				b.Fatal(err)
			}
			offer, err := app.Catalog.CreateOffer(b.Context(), a, fromJSON[parcela.OfferRequest](b, `{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
				"payment_configurations": [
				{"payment_type": "upfront", "payment_methods": ["pix", "boleto"], "expires_in_hours": 48},
				{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": ["boleto"], "allowed_down_payment_methods": ["pix", "boleto"],
				 "down_payment_type": "percentage", "down_payment_value": 0.2, "interest_rate": 0.0199, "max_installments": 12, "expires_in_hours": 48}]}`))
			if err != nil {
				b.Fatal(err)
			}
			b.Run("joined", func(b *testing.B) {
				for b.Loop() {
					if _, err := db.PublicOffer(b.Context(), parcela.Sandbox, c.Slug, offer.ID); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("owner", func(b *testing.B) {
				for b.Loop() {
					if _, err := db.Offer(b.Context(), a, offer.ID); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
