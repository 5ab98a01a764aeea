package sqldb

import (
	"context"
	"database/sql"

	"parcela"
)

const orderSelect = `SELECT id, company_id, environment, offer_id, status, customer_name, customer_birthdate, customer_document, email, phone,
	address_id, cancelation_reason, access_code, created_at, updated_at FROM orders`

func scanOrder(row rowScanner) (*parcela.Order, string, error) {
	var o parcela.Order
	var env, addressID string
	var reason sql.NullString
	var created, updated int64
	err := row.Scan(&o.ID, &o.CompanyID, &env, &o.OfferID, &o.Status, &o.CustomerName, &o.CustomerBirthdate, &o.CustomerDocument,
		&o.Email, &o.Phone, &addressID, &reason, &o.AccessCode, &created, &updated)
	if err != nil {
		return nil, "", err
	}
	o.Environment, o.CancelationReason = parcela.Environment(env), nullString(reason)
	o.CreatedAt, o.UpdatedAt = fromMS(created), fromMS(updated)
	return &o, addressID, nil
}

// CreateOrder stores a new order with its address.
func (db *DB) CreateOrder(ctx context.Context, o *parcela.Order) error {
	return failed("create order", db.inTx(ctx, func(tx *Tx) error {
		if err := insertAddress(ctx, tx, &o.Address); err != nil {
			return err
		}
		_, err := tx.r.exec(ctx, `INSERT INTO orders (id, company_id, environment, offer_id, status, customer_name, customer_birthdate, customer_document,
			email, phone, address_id, access_code, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			o.ID, o.CompanyID, string(o.Environment), o.OfferID, o.Status, o.CustomerName, o.CustomerBirthdate, o.CustomerDocument,
			o.Email, o.Phone, o.Address.ID, o.AccessCode, ms64(o.CreatedAt), ms64(o.UpdatedAt))
		return err
	}))
}

// loadOrder reads one order of the caller with everything its form shows.
// The order's row is read before its billings', and each billing's before
// its bills': a change committed in between moves a version or status that
// the use case's change is guarded by.
func loadOrder(ctx context.Context, r runner, a parcela.Auth, id string) (*parcela.Order, error) {
	o, addressID, err := scanOrder(r.queryRow(ctx, orderSelect+` WHERE id = ? AND company_id = ? AND environment = ?`,
		id, a.CompanyID, string(a.Environment)))
	if err != nil {
		return nil, notFound(err, "order")
	}
	addr, err := address(ctx, r, addressID)
	if err != nil {
		return nil, err
	}
	o.Address = *addr
	if o.Offer, err = loadOffer(ctx, r, a, o.OfferID); err != nil {
		return nil, err
	}
	if o.Offer.Product.Company, err = companyByID(ctx, r, a.CompanyID); err != nil {
		return nil, err
	}
	if o.Billings, err = loadBillings(ctx, r, o.ID); err != nil {
		return nil, err
	}
	return o, nil
}

// Order returns one of the caller's orders with its offer and billings.
func (db *DB) Order(ctx context.Context, a parcela.Auth, id string) (*parcela.Order, error) {
	o, err := loadOrder(ctx, db.reader, a, id)
	return o, failed("read order", err)
}

// OrderOfPayment returns the order that one of the caller's payments pays.
func (db *DB) OrderOfPayment(ctx context.Context, a parcela.Auth, paymentID string) (*parcela.Order, error) {
	var orderID string
	err := db.reader.queryRow(ctx, `SELECT b.order_id FROM payments p JOIN bills b ON b.id = p.bill_id
		WHERE p.id = ? AND p.company_id = ? AND p.environment = ?`, paymentID, a.CompanyID, string(a.Environment)).Scan(&orderID)
	if err != nil {
		return nil, failed("read payment", notFound(err, "payment"))
	}
	return db.Order(ctx, a, orderID)
}
