package sqldbtest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// saleRowChecks are rules of a sale's rows that no foreign key states:
// each row is of its parent's company and environment (a key says only
// that the parent exists). Each query selects the rows that break its rule.
// A bill's rule (its billing's company, environment and order) is its key
// on PostgreSQL (migration 00023), so no row can break it there.
var saleRowChecks = []struct{ rule, query string }{
	{"an order is its offer's company and environment", `SELECT r.id FROM orders r JOIN offers p ON p.id = r.offer_id
		WHERE r.company_id <> p.company_id OR r.environment <> p.environment`},
	{"a billing is its order's company and environment", `SELECT r.id FROM billings r JOIN orders p ON p.id = r.order_id
		WHERE r.company_id <> p.company_id OR r.environment <> p.environment`},
	{"a payment is its bill's company and environment", `SELECT r.id FROM payments r JOIN bills p ON p.id = r.bill_id
		WHERE r.company_id <> p.company_id OR r.environment <> p.environment`},
	{"a payment intent is its bill's company and environment", `SELECT r.id FROM payment_intents r JOIN bills p ON p.id = r.bill_id
		WHERE r.company_id <> p.company_id OR r.environment <> p.environment`},
}

// checkSaleRows runs saleRowChecks over the PostgreSQL database a test
// binary's tests shared: every row they wrote, through every path.
func checkSaleRows(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return checkSaleRowsOn(ctx, conn)
}

// checkSaleRowsOn runs saleRowChecks on q: a connection, or a transaction.
func checkSaleRowsOn(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) error {
	for _, c := range saleRowChecks {
		var n int
		var example string
		err := q.QueryRow(ctx, `SELECT count(*), coalesce(min(id), '') FROM (`+c.query+`) broken`).Scan(&n, &example)
		if err != nil {
			return fmt.Errorf("check %q: %w", c.rule, err)
		}
		if n > 0 {
			return fmt.Errorf("%d rows break %q (%s among them)", n, c.rule, example)
		}
	}
	return nil
}
