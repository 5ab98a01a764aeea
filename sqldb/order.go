package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"parcela"
)

const orderSelect = `SELECT id, company_id, environment, offer_id, status, customer_name, customer_birthdate, customer_document, email, phone,
	address_id, cancelation_reason, created_at, updated_at FROM orders`

func scanOrder(row rowScanner) (*parcela.Order, string, error) {
	var o parcela.Order
	var env, addressID string
	var reason sql.NullString
	var created, updated int64
	err := row.Scan(&o.ID, &o.CompanyID, &env, &o.OfferID, &o.Status, &o.CustomerName, &o.CustomerBirthdate, &o.CustomerDocument,
		&o.Email, &o.Phone, &addressID, &reason, &created, &updated)
	if err != nil {
		return nil, "", err
	}
	o.Environment, o.CancelationReason = parcela.Environment(env), nullString(reason)
	o.CreatedAt, o.UpdatedAt = fromMS(created), fromMS(updated)
	return &o, addressID, nil
}

// CreateOrder stores a pending order of a sellable offer of the caller. The
// offer and company are read before the write transaction, which on SQLite
// holds the single writer; orders take no seat, so a stale read only means
// an offer sold out meanwhile, which the charge's guarded UPDATE refuses.
func (db *DB) CreateOrder(ctx context.Context, a parcela.Auth, req parcela.OrderRequest) (*parcela.Order, error) {
	now := db.Clock.Now()
	o, err := parcela.BuildOrder(req, now)
	if err != nil {
		return nil, err
	}
	offer, err := loadOffer(ctx, db.reader, db, a, o.OfferID)
	if parcela.ErrorCode(err) == parcela.ENOTFOUND {
		return nil, &parcela.Error{Code: parcela.EINVALID, Message: "order.offer_id is not an offer of this company and environment",
			Fields: []parcela.FieldError{{Field: "order.offer_id", Code: "not_found", Message: "is not an offer of this company and environment"}}}
	} else if err != nil {
		return nil, err
	}
	if err := offer.Sellable(now); err != nil {
		return nil, &parcela.Error{Code: parcela.EINVALID, Message: "order.offer_id: " + parcela.ErrorMessage(err),
			Fields: []parcela.FieldError{{Field: "order.offer_id", Code: "not_sellable", Message: parcela.ErrorMessage(err)}}}
	}
	if offer.Product.Company, err = companyByID(ctx, db.reader, db, a.CompanyID); err != nil {
		return nil, err
	}
	o.CompanyID, o.Environment, o.CreatedAt, o.UpdatedAt = a.CompanyID, a.Environment, now, now
	o.Offer, o.Billings = offer, []*parcela.Billing{}
	err = db.inTxAt(ctx, now, func(tx *Tx) error {
		if err := insertAddress(ctx, tx, &o.Address); err != nil {
			e := err.(*parcela.Error)
			if len(e.Fields) > 0 {
				e.Fields[0].Field = "order.address.city_ibge_code"
				e.Message = "order.address.city_ibge_code is not a known IBGE municipality"
			}
			return err
		}
		o.ID = newID()
		_, err := tx.exec(ctx, `INSERT INTO orders (id, company_id, environment, offer_id, status, customer_name, customer_birthdate, customer_document,
			email, phone, address_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			o.ID, o.CompanyID, string(o.Environment), offer.ID, o.Status, o.CustomerName, o.CustomerBirthdate, o.CustomerDocument,
			o.Email, o.Phone, o.Address.ID, ms64(o.CreatedAt), ms64(o.UpdatedAt))
		return err
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// loadOrder reads one order of the caller with everything its form shows.
func loadOrder(ctx context.Context, q querier, db *DB, a parcela.Auth, id string) (*parcela.Order, error) {
	o, addressID, err := scanOrder(q.QueryRowContext(ctx, db.rebind(orderSelect+` WHERE id = ? AND company_id = ? AND environment = ?`),
		id, a.CompanyID, string(a.Environment)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("order")
	} else if err != nil {
		return nil, err
	}
	addr, err := db.address(ctx, q, addressID)
	if err != nil {
		return nil, err
	}
	o.Address = *addr
	if o.Offer, err = loadOffer(ctx, q, db, a, o.OfferID); err != nil {
		return nil, err
	}
	if o.Offer.Product.Company, err = companyByID(ctx, q, db, a.CompanyID); err != nil {
		return nil, err
	}
	if o.Billings, err = loadBillings(ctx, q, db, o.ID); err != nil {
		return nil, err
	}
	if o.Billings == nil {
		o.Billings = []*parcela.Billing{}
	}
	return o, nil
}

// Order returns one of the caller's orders with its offer and billings.
func (db *DB) Order(ctx context.Context, a parcela.Auth, id string) (*parcela.Order, error) {
	return loadOrder(ctx, db.reader, db, a, id)
}

// CancelOrder cancels a pending or in-progress order, and with it its open
// billing, open bills and unpaid payments; paid bills stay paid.
func (db *DB) CancelOrder(ctx context.Context, a parcela.Auth, id, reason string) (*parcela.Order, error) {
	var o *parcela.Order
	err := db.inTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE orders SET status = ?, cancelation_reason = ?, updated_at = ?
			WHERE id = ? AND company_id = ? AND environment = ? AND status IN (?, ?)`,
			parcela.OrderCanceled, reason, ms64(tx.Now), id, a.CompanyID, string(a.Environment), parcela.OrderPending, parcela.OrderInProgress)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			cur, err := loadOrder(ctx, tx.q, db, a, id)
			if err != nil {
				return err
			}
			return parcela.Errorf(parcela.EINVALIDSTATE, "order is %s; only pending or in_progress orders can be canceled", cur.Status)
		}
		if err := cancelOpenBillings(ctx, tx, a, id, reason); err != nil {
			return err
		}
		if o, err = loadOrder(ctx, tx.q, db, a, id); err != nil {
			return err
		}
		return writeEvent(ctx, tx, a.CompanyID, a.Environment, "order", o.ID, "canceled", parcela.NewOrderForm(o, db.links(a.Environment)))
	})
	return o, err
}
