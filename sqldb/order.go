package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"parcela"
)

// orderSelect reads an order (aliased o) with its address, packed (see
// pack).
const orderSelect = `SELECT ` + packOpen + `o.id, o.company_id, o.environment, o.offer_id, o.status, o.customer_name, o.customer_birthdate, o.customer_document,
	o.email, o.phone, o.cancelation_reason, o.access_code, o.created_at, o.updated_at, ` + addressColumns + `)
	FROM orders o JOIN addresses a ON a.id = o.address_id` + addressCity

func scanOrder(row rowScanner) (*parcela.Order, error) {
	var o parcela.Order
	var env string
	var reason sql.NullString
	var created, updated int64
	addr, finish := addressFields(&o.Address)
	err := row.Scan(append([]any{&o.ID, &o.CompanyID, &env, &o.OfferID, &o.Status, &o.CustomerName, &o.CustomerBirthdate, &o.CustomerDocument,
		&o.Email, &o.Phone, &reason, &o.AccessCode, &created, &updated}, addr...)...)
	if err != nil {
		return nil, err
	}
	finish()
	o.Environment, o.CancelationReason = parcela.Environment(env), nullString(reason)
	o.CreatedAt, o.UpdatedAt = fromMS(created), fromMS(updated)
	return &o, nil
}

// CreateOrder stores a new order with its address, in one round trip on
// PostgreSQL. The offer must still sell as the order was decided: a PATCH
// that disabled it or its product, or moved its expiry before the order,
// since it was read makes a conflict, so no order commits after the PATCH
// that stopped sales answered. The offer's and the product's rows are
// share-locked, as a charge's are (takeSeat): a PATCH in flight, which
// locks its row first, is waited for and then read as it committed.
func (db *DB) CreateOrder(ctx context.Context, o *parcela.Order) error {
	return failed("create order", db.inTxOf(ctx, parcela.Auth{CompanyID: o.CompanyID, Environment: o.Environment}, func(tx *Tx) error {
		p := tx.pipeline()
		if err := insertAddress(ctx, p, &o.Address); err != nil {
			return err
		}
		var formKey sql.NullString // the API's orders have none
		if o.FormKey != "" {
			formKey = sql.NullString{String: o.FormKey, Valid: true}
		}
		err := p.exec(ctx, nil, `INSERT INTO orders (id, company_id, environment, offer_id, status, customer_name, customer_birthdate, customer_document,
			email, phone, address_id, access_code, form_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			o.ID, o.CompanyID, string(o.Environment), o.OfferID, o.Status, o.CustomerName, o.CustomerBirthdate, o.CustomerDocument,
			o.Email, o.Phone, o.Address.ID, o.AccessCode, formKey, ms64(o.CreatedAt), ms64(o.UpdatedAt))
		if err != nil {
			return err
		}
		err = p.queryRow(ctx, func(row rowScanner) error {
			var expires sql.NullInt64
			var availability, product string
			if err := row.Scan(&availability, &expires, &product); err != nil {
				return err
			}
			if availability != "enabled" || (expires.Valid && expires.Int64 <= ms64(o.CreatedAt)) {
				return &parcela.Conflict{Entity: "offer", ID: o.OfferID}
			}
			if product != "enabled" {
				return &parcela.Conflict{Entity: "product", ID: o.Offer.ProductID}
			}
			return nil
		}, `SELECT o.availability, o.expires_at, p.availability FROM offers o JOIN products p ON p.id = o.product_id
			WHERE o.id = ?`+db.lockRows("SHARE"), o.OfferID)
		if err != nil {
			return err
		}
		return p.flush(ctx)
	}))
}

// loadOrder reads one order of the caller with everything its form shows.
// The order's row is read before its billings', and each billing's before
// its bills': a change committed in between moves a version or status that
// the use case's change is guarded by. The order, its offer's version
// and its billings are three statements, in that order, and on PostgreSQL
// one round trip (readPipeline); the offer (with the company, the product
// and the configurations) is then the kept one, or read after them when
// none is kept at that version (offerCache).
func (db *DB) loadOrder(ctx context.Context, a parcela.Auth, id string) (*parcela.Order, error) {
	p := db.readPipeline()
	var o *parcela.Order
	err := p.queryRow(ctx, func(row rowScanner) (err error) {
		o, err = scanOrder(row)
		return notFound(err, "order")
	}, orderSelect+` WHERE o.id = ? AND o.company_id = ? AND o.environment = ?`, id, a.CompanyID, string(a.Environment))
	if err != nil {
		return nil, err
	}
	env := string(a.Environment)
	offerArgs := []any{a.CompanyID, env, id, a.CompanyID, env, id, a.CompanyID, env}
	var offer offerVersion
	found := false
	err = p.queryRow(ctx, func(row rowScanner) error {
		err := offer.scan(row)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // the order's offer is not the company's: not found below
		}
		found = err == nil
		return err
	}, offerOfOrderRead.narrow, offerArgs[:offerOfOrderRead.versionArgs]...)
	if err != nil {
		return nil, err
	}
	var billings []*parcela.Billing
	err = p.query(ctx, func(row rowScanner) error {
		b, err := scanBilling(row)
		billings = append(billings, b)
		return err
	}, billingSelect+` WHERE bl.order_id = ? ORDER BY bl.created_at, bl.id`, id)
	if err != nil {
		return nil, err
	}
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	if !found {
		return nil, notFound(sql.ErrNoRows, "offer")
	}
	if o.Offer, err = db.offerAt(ctx, db.reader, offerOfOrderRead, offer, offerArgs...); err != nil {
		return nil, notFound(err, "offer")
	}
	if o.Billings, err = attachBillingParts(ctx, db.reader, o.ID, billings); err != nil {
		return nil, err
	}
	return o, nil
}

// Order returns one of the caller's orders with its offer and billings.
func (db *DB) Order(ctx context.Context, a parcela.Auth, id string) (*parcela.Order, error) {
	o, err := db.loadOrder(ctx, a, id)
	return o, failed("read order", err)
}

// orderOfFormQuery finds an order by its form's key (orders_form_key).
const orderOfFormQuery = `SELECT id FROM orders WHERE company_id = ? AND environment = ? AND form_key = ?`

// OrderOfForm returns the caller's order created with formKey.
func (db *DB) OrderOfForm(ctx context.Context, a parcela.Auth, formKey string) (*parcela.Order, error) {
	var id string
	err := db.reader.queryRow(ctx, orderOfFormQuery, a.CompanyID, string(a.Environment), formKey).Scan(&id)
	if err != nil {
		return nil, failed("read order", notFound(err, "order"))
	}
	return db.Order(ctx, a, id)
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
