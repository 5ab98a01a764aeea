package sqldb

import (
	"context"

	"parcela"
)

// The payer's lookups. The pages carry no token: an order or a bill is
// found by id within an environment, and the use case compares the code
// read here with the one the payer sent before reading anything more.

// CompanyBySlug returns the company whose offer links carry slug.
func (db *DB) CompanyBySlug(ctx context.Context, slug string) (*parcela.Company, error) {
	c, err := companyWhere(ctx, db.reader, "slug", slug)
	return c, failed("read company", err)
}

// OrderKey returns an order's owner and access code.
func (db *DB) OrderKey(ctx context.Context, env parcela.Environment, id string) (parcela.PayerKey, error) {
	k := parcela.PayerKey{Owned: parcela.Owned{ID: id, Auth: parcela.Auth{Environment: env}}, OrderID: id}
	err := db.reader.queryRow(ctx, `SELECT company_id, access_code FROM orders WHERE id = ? AND environment = ?`, id, string(env)).
		Scan(&k.Auth.CompanyID, &k.Code)
	return k, failed("read order", notFound(err, "order"))
}

// BillKey returns a bill's owner, order and authentication code.
func (db *DB) BillKey(ctx context.Context, env parcela.Environment, id string) (parcela.PayerKey, error) {
	k := parcela.PayerKey{Owned: parcela.Owned{ID: id, Auth: parcela.Auth{Environment: env}}}
	err := db.reader.queryRow(ctx, `SELECT b.company_id, b.order_id, o.offer_id, b.authentication_code FROM bills b JOIN orders o ON o.id = b.order_id
		WHERE b.id = ? AND b.environment = ?`, id, string(env)).
		Scan(&k.Auth.CompanyID, &k.OrderID, &k.OfferID, &k.Code)
	return k, failed("read bill", notFound(err, "bill"))
}
