package sqldbtest

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"parcela"
	"parcela/sqldb"
)

func TestMain(m *testing.M) { Main(m) }

// Each rule of the sale rows' check finds its row moved to another
// environment than its parent's: a financed charge's order, billing, bill
// and Pix payment, each moved in a transaction rolled back after the check.
func TestSaleRowsCheckFindsEachRowOutOfItsParent(t *testing.T) {
	if os.Getenv("PARCELA_TEST_POSTGRES_URL") == "" {
		t.Skip("PARCELA_TEST_POSTGRES_URL is not set")
	}
	ctx := context.Background()
	db := Open(t, sqldb.Postgres, sqldb.Config{})
	app := Services(db, nil)
	a := parcela.Auth{CompanyID: Company(t, db).ID, Environment: parcela.Sandbox}
	decode := func(s string, v any) {
		t.Helper()
		if err := json.Unmarshal([]byte(s), v); err != nil {
			t.Fatal(err)
		}
	}
	var pin parcela.ProductInput
	decode(`{"name": "Curso", "full_amount_cents": 150000, "kind": "course"}`, &pin)
	p, err := app.Catalog.CreateProduct(ctx, a, pin)
	if err != nil {
		t.Fatal(err)
	}
	var oin parcela.OfferRequest
	decode(`{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
		"payment_configurations": [{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": ["boleto"],
		"allowed_down_payment_methods": ["pix"], "down_payment_type": "percentage", "down_payment_value": 0.2,
		"interest_rate": 0.0299, "max_installments": 12, "expires_in_hours": 72}]}`, &oin)
	offer, err := app.Catalog.CreateOffer(ctx, a, oin)
	if err != nil {
		t.Fatal(err)
	}
	var req parcela.OrderRequest
	decode(`{"order": {"offer_id": "`+offer.ID+`", "customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17",
		"customer_document": "52998224725", "email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100",
		"street": "Avenida Paulista", "number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`, &req)
	o, err := app.Orders.CreateOrder(ctx, a, req)
	if err != nil {
		t.Fatal(err)
	}
	var charge parcela.ChargeRequest
	decode(`{"payment_configuration_id": "`+offer.PaymentConfigurations[0].ID+`", "due_day": 10, "installments": 12,
		"payment": {"payment_method": "pix"}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`, &charge)
	if o, err = app.Orders.ChargeOrder(ctx, a, o.ID, charge); err != nil {
		t.Fatal(err)
	}
	billing := o.Billings[0]
	bill := billing.Bills[0]

	conn, err := pgx.Connect(ctx, DSN(t, sqldb.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := checkSaleRowsOn(ctx, conn); err != nil {
		t.Fatalf("a charge's own rows: %v", err)
	}
	for _, c := range []struct{ table, id, rule string }{
		{"orders", o.ID, "an order is its offer's company and environment"},
		{"billings", billing.ID, "a billing is its order's company and environment"},
		{"bills", bill.ID, "a bill is its billing's company, environment and order"},
		{"payments", bill.Payments[0].ID, "a payment is its bill's company and environment"},
	} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `UPDATE `+c.table+` SET environment = 'production' WHERE id = $1`, c.id); err != nil {
			t.Fatal(err)
		}
		err = checkSaleRowsOn(ctx, tx)
		if rb := tx.Rollback(ctx); rb != nil {
			t.Fatal(rb)
		}
		if err == nil || !strings.Contains(err.Error(), c.rule) || !strings.Contains(err.Error(), c.id) {
			t.Errorf("%s moved: check = %v, want %q naming %s", c.table, err, c.rule, c.id)
		}
	}
}
