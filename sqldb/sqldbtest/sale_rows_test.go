package sqldbtest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"parcela"
	"parcela/sqldb"
)

func TestMain(m *testing.M) { Main(m) }

// Each rule of the sale rows' check finds its row moved to another
// environment than its parent's: a financed charge's order, billing and
// Pix payment, each moved in a transaction rolled back after the check. A
// bill cannot be moved out of its billing at all on PostgreSQL: its key
// refuses it.
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
	// The billing is moved with its bills, in one statement: its key
	// (migration 00023) holds its bills to its environment.
	for _, c := range []struct{ table, id, rule, move string }{
		{"orders", o.ID, "an order is its offer's company and environment", `UPDATE orders SET environment = 'production' WHERE id = $1`},
		{"billings", billing.ID, "a billing is its order's company and environment",
			`WITH bills AS (UPDATE bills SET environment = 'production' WHERE billing_id = $1)
			UPDATE billings SET environment = 'production' WHERE id = $1`},
		{"payments", bill.Payments[0].ID, "a payment is its bill's company and environment", `UPDATE payments SET environment = 'production' WHERE id = $1`},
	} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, c.move, c.id); err != nil {
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

	// A bill is its billing's company, environment and order by its key:
	// moving it out of any of them is refused, and so is moving its billing
	// without it.
	other, err := app.Orders.CreateOrder(ctx, a, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, move string
		args       []any
	}{
		{"a bill to another environment", `UPDATE bills SET environment = 'production' WHERE id = $1`, []any{bill.ID}},
		{"a bill to another company", `UPDATE bills SET company_id = $2 WHERE id = $1`, []any{bill.ID, Company(t, db).ID}},
		{"a bill to another order", `UPDATE bills SET order_id = $2 WHERE id = $1`, []any{bill.ID, other.ID}},
		{"a billing without its bills", `UPDATE billings SET environment = 'production' WHERE id = $1`, []any{billing.ID}},
	} {
		// In a transaction rolled back, so that without the key the
		// move is not left in the database the tests share.
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tx.Exec(ctx, c.move, c.args...)
		if rb := tx.Rollback(ctx); rb != nil {
			t.Fatal(rb)
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23503" || pgErr.ConstraintName != "bills_billing_sale_fkey" {
			t.Errorf("%s: %v, want refused by bills_billing_sale_fkey", c.name, err)
		}
	}
}
