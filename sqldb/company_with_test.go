package sqldb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// An offer CreateCompanyWith cannot store (it costs more than its product:
// insertOffer's conflict) fails the whole company, and is not reported as
// the company's slug taken by another: the demo's setup then said "the
// database already has a company" of an empty database.
func TestCreateCompanyWithAnOfferRefusedIsNotASlugTaken(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		kinds, shifts, err := db.ProductReferences(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := parcela.NewCompany("Escola "+sqldbtest.Suffix(), "11222333000181", "with-"+sqldbtest.Suffix())
		_, _, err = db.CreateCompanyWith(ctx, &c, parcela.Sandbox, func(c *parcela.Company) ([]*parcela.Product, []*parcela.Offer, error) {
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
			now := time.Now()
			name, amount, kind := "Curso", int64(100000), "course"
			p, err := parcela.NewProduct(a, parcela.ProductInput{Name: &name, FullAmountCents: &amount, Kind: &kind}, kinds, shifts, now)
			if err != nil {
				return nil, nil, err
			}
			offerName, price, upfront, methods := "Turma", int64(90000), parcela.Upfront, []string{"pix"}
			o, err := parcela.NewOffer(a, parcela.OfferRequest{
				Offer:                 parcela.OfferFields{Name: &offerName, ProductID: &p.ID, AmountCents: &price},
				PaymentConfigurations: &[]parcela.PaymentConfigurationRequest{{PaymentType: &upfront, PaymentMethods: &methods}},
			}, c, p, now)
			if err != nil {
				return nil, nil, err
			}
			o.AmountCents = amount + 1 // more than its product: the store refuses it
			return []*parcela.Product{p}, []*parcela.Offer{o}, nil
		})
		if err == nil {
			t.Fatal("an offer costing more than its product was stored")
		}
		if parcela.ErrorCode(err) == parcela.ECONFLICT || strings.Contains(err.Error(), "already exists") {
			t.Fatalf("an offer refused reported as the slug taken: %v", err)
		}
		if _, err := db.Company(ctx, c.ID); parcela.ErrorCode(err) != parcela.ENOTFOUND {
			t.Fatalf("the company of a failed setup: %v", err)
		}
	})
}
