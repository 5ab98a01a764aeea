package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"parcela"
)

const offerSelect = `SELECT id, company_id, environment, product_id, name, amount_cents, availability, expires_at, seats, seats_taken,
	exclude_from_campaign, created_at, updated_at FROM offers`

func scanOffer(row rowScanner) (*parcela.Offer, error) {
	var o parcela.Offer
	var env string
	var expires, seats sql.NullInt64
	var created, updated int64
	err := row.Scan(&o.ID, &o.CompanyID, &env, &o.ProductID, &o.Name, &o.AmountCents, &o.Availability, &expires, &seats, &o.SeatsTaken,
		&o.ExcludeFromCampaign, &created, &updated)
	if err != nil {
		return nil, err
	}
	o.Environment = parcela.Environment(env)
	o.ExpiresAt, o.Seats = fromNullMS(expires), nullInt(seats)
	o.CreatedAt, o.UpdatedAt = fromMS(created), fromMS(updated)
	return &o, nil
}

const configurationSelect = `SELECT id, offer_id, position, payment_type, financed_type, payment_methods, allowed_down_payment_methods,
	availability, expires_in, interest_rate, max_installments, max_down_payment_installments, min_installment_cents, down_payment_type,
	down_payment_value, registration_fee, take_rate_type, take_rate_value, created_at, updated_at FROM payment_configurations`

func scanConfiguration(row rowScanner) (*parcela.PaymentConfiguration, error) {
	var pc parcela.PaymentConfiguration
	var financed, dpType sql.NullString
	var methods, allowed string
	var maxDP sql.NullInt64
	var created, updated int64
	err := row.Scan(&pc.ID, &pc.OfferID, &pc.Position, &pc.PaymentType, &financed, &methods, &allowed, &pc.Availability, &pc.ExpiresIn,
		rate(&pc.InterestRate), &pc.MaxInstallments, &maxDP, &pc.MinInstallmentCents, &dpType, rate(&pc.DownPaymentValue),
		rate(&pc.RegistrationFee), &pc.TakeRateType, rate(&pc.TakeRateValue), &created, &updated)
	if err != nil {
		return nil, err
	}
	pc.FinancedType, pc.MaxDownPaymentInstallments = nullString(financed), nullInt(maxDP)
	if dpType.Valid {
		t := parcela.DownPaymentType(dpType.String)
		pc.DownPaymentType = &t
	}
	pc.PaymentMethods, pc.AllowedDownPaymentMethods = splitList(methods), splitList(allowed)
	pc.CreatedAt, pc.UpdatedAt = fromMS(created), fromMS(updated)
	return &pc, nil
}

func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

// CreateOffer validates an offer request against the company's limits and
// stores the offer with its payment configurations.
func (db *DB) CreateOffer(ctx context.Context, a parcela.Auth, req parcela.OfferRequest) (*parcela.Offer, error) {
	var o *parcela.Offer
	err := db.inTx(ctx, func(tx *Tx) error {
		c, err := companyByID(ctx, tx.q, tx.db, a.CompanyID)
		if err != nil {
			return err
		}
		var product *parcela.Product
		if req.Offer.ProductID != nil && *req.Offer.ProductID != "" {
			product, err = productByID(ctx, tx.q, db, a, *req.Offer.ProductID)
			if err != nil && parcela.ErrorCode(err) != parcela.ENOTFOUND {
				return err
			}
		}
		if o, err = parcela.BuildOffer(req, c, product, tx.Now); err != nil {
			return err
		}
		o.ID, o.Environment, o.CreatedAt, o.UpdatedAt = newID(), a.Environment, tx.Now, tx.Now
		_, err = tx.exec(ctx, `INSERT INTO offers (id, company_id, environment, product_id, name, amount_cents, availability, expires_at, seats,
			seats_taken, exclude_from_campaign, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
			o.ID, o.CompanyID, string(o.Environment), o.ProductID, o.Name, o.AmountCents, o.Availability, msPtr(o.ExpiresAt), o.Seats,
			o.ExcludeFromCampaign, ms64(o.CreatedAt), ms64(o.UpdatedAt))
		if err != nil {
			return err
		}
		for _, pc := range o.PaymentConfigurations {
			pc.ID, pc.OfferID, pc.CreatedAt, pc.UpdatedAt = newID(), o.ID, tx.Now, tx.Now
			var dpType any
			if pc.DownPaymentType != nil {
				dpType = string(*pc.DownPaymentType)
			}
			_, err := tx.exec(ctx, `INSERT INTO payment_configurations (id, offer_id, position, payment_type, financed_type, payment_methods,
				allowed_down_payment_methods, availability, expires_in, interest_rate, max_installments, max_down_payment_installments,
				min_installment_cents, down_payment_type, down_payment_value, registration_fee, take_rate_type, take_rate_value, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				pc.ID, pc.OfferID, pc.Position, pc.PaymentType, pc.FinancedType, strings.Join(pc.PaymentMethods, ","),
				strings.Join(pc.AllowedDownPaymentMethods, ","), pc.Availability, pc.ExpiresIn, pc.InterestRate.String(), pc.MaxInstallments,
				pc.MaxDownPaymentInstallments, pc.MinInstallmentCents, dpType, pc.DownPaymentValue.String(), pc.RegistrationFee.String(),
				pc.TakeRateType, pc.TakeRateValue.String(), ms64(pc.CreatedAt), ms64(pc.UpdatedAt))
			if err != nil {
				return err
			}
		}
		return nil
	})
	return o, err
}

// loadOffer reads an offer of the caller with its product and configurations.
func loadOffer(ctx context.Context, q querier, db *DB, a parcela.Auth, id string) (*parcela.Offer, error) {
	o, err := scanOffer(q.QueryRowContext(ctx, db.rebind(offerSelect+` WHERE id = ? AND company_id = ? AND environment = ?`), id, a.CompanyID, string(a.Environment)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("offer")
	} else if err != nil {
		return nil, err
	}
	return o, attachOfferParts(ctx, q, db, a, []*parcela.Offer{o})
}

// attachOfferParts loads the products and configurations of offers in two
// queries, however many offers there are.
func attachOfferParts(ctx context.Context, q querier, db *DB, a parcela.Auth, offers []*parcela.Offer) error {
	if len(offers) == 0 {
		return nil
	}
	byID := make(map[string]*parcela.Offer, len(offers))
	byProduct := map[string][]*parcela.Offer{}
	var offerIDs, productIDs []any
	for _, o := range offers {
		byID[o.ID] = o
		offerIDs = append(offerIDs, o.ID)
		if _, seen := byProduct[o.ProductID]; !seen {
			productIDs = append(productIDs, o.ProductID)
		}
		byProduct[o.ProductID] = append(byProduct[o.ProductID], o)
	}
	rows, err := q.QueryContext(ctx, db.rebind(productSelect+` WHERE p.id IN (`+placeholders(len(productIDs))+`) AND p.company_id = ? AND p.environment = ?`),
		append(productIDs, a.CompanyID, string(a.Environment))...)
	if err != nil {
		return err
	}
	for rows.Next() {
		p, err := scanProduct(rows)
		if err != nil {
			rows.Close()
			return err
		}
		for _, o := range byProduct[p.ID] {
			o.Product = p
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = q.QueryContext(ctx, db.rebind(configurationSelect+` WHERE offer_id IN (`+placeholders(len(offerIDs))+`) ORDER BY offer_id, position`), offerIDs...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		pc, err := scanConfiguration(rows)
		if err != nil {
			return err
		}
		o := byID[pc.OfferID]
		o.PaymentConfigurations = append(o.PaymentConfigurations, pc)
	}
	return rows.Err()
}

// Offer returns one of the caller's offers with its product and configurations.
func (db *DB) Offer(ctx context.Context, a parcela.Auth, id string) (*parcela.Offer, error) {
	return loadOffer(ctx, db.reader, db, a, id)
}

// CompanySlug returns the slug used in offer URLs.
func (db *DB) CompanySlug(ctx context.Context, companyID string) (string, error) {
	var slug string
	err := db.queryRow(ctx, `SELECT slug FROM companies WHERE id = ?`, companyID).Scan(&slug)
	return slug, err
}

// Offers lists the caller's offers, newest first.
func (db *DB) Offers(ctx context.Context, a parcela.Auth, page, perPage int) ([]*parcela.Offer, int, error) {
	var total int
	if err := db.queryRow(ctx, `SELECT COUNT(*) FROM offers WHERE company_id = ? AND environment = ?`, a.CompanyID, string(a.Environment)).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.query(ctx, offerSelect+` WHERE company_id = ? AND environment = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
		a.CompanyID, string(a.Environment), perPage, (page-1)*perPage)
	if err != nil {
		return nil, 0, err
	}
	out := []*parcela.Offer{}
	for rows.Next() {
		o, err := scanOffer(rows)
		if err != nil {
			rows.Close()
			return nil, 0, err
		}
		out = append(out, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return out, total, attachOfferParts(ctx, db.reader, db, a, out)
}

// UpdateOffer changes an offer's name, availability, expiry or seats.
func (db *DB) UpdateOffer(ctx context.Context, a parcela.Auth, id string, f parcela.OfferFields) (*parcela.Offer, error) {
	var o *parcela.Offer
	err := db.inTx(ctx, func(tx *Tx) error {
		// Charges share-lock the offer (takeSeat); this waits for them, so
		// that a count of seats taken below sees all their billings.
		if _, err := tx.exec(ctx, `SELECT id FROM offers WHERE id = ?`+db.lockRows("UPDATE"), id); err != nil {
			return err
		}
		var err error
		if o, err = loadOffer(ctx, tx.q, db, a, id); err != nil {
			return err
		}
		if o.Seats == nil && f.Seats != nil {
			// Offers without a limit keep no count: take it now.
			if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM billings bl JOIN orders o ON o.id = bl.order_id
				WHERE o.company_id = ? AND o.environment = ? AND o.offer_id = ? AND bl.origin_billing_id IS NULL`,
				a.CompanyID, string(a.Environment), id).Scan(&o.SeatsTaken); err != nil {
				return err
			}
		}
		var v parcela.Validation
		if f.Name != nil {
			if o.Name = strings.TrimSpace(*f.Name); o.Name == "" {
				v.Add("offer.name", "required", "must not be empty")
			}
		}
		if f.Availability != nil {
			if o.Availability = *f.Availability; o.Availability != "enabled" && o.Availability != "disabled" {
				v.Add("offer.availability", "invalid", "must be enabled or disabled")
			}
		}
		if f.ExpiresAt != nil {
			if o.ExpiresAt = f.ExpiresAt; !f.ExpiresAt.After(tx.Now) {
				v.Add("offer.expires_at", "in_past", "must be in the future")
			}
		}
		if f.Seats != nil {
			if o.Seats = f.Seats; *f.Seats <= 0 {
				v.Add("offer.seats", "too_small", "must be greater than 0")
			} else if *f.Seats < o.SeatsTaken {
				v.Add("offer.seats", "too_small", fmt.Sprintf("must be at least the %d seats already taken", o.SeatsTaken))
			}
		}
		for field, set := range map[string]bool{"offer.amount_cents": f.AmountCents != nil, "offer.product_id": f.ProductID != nil} {
			if set {
				v.Add(field, "not_allowed", "cannot be changed; create a new offer")
			}
		}
		if err := v.Err(); err != nil {
			return err
		}
		o.UpdatedAt = tx.Now
		_, err = tx.exec(ctx, `UPDATE offers SET name = ?, availability = ?, expires_at = ?, seats = ?, seats_taken = ?, updated_at = ? WHERE id = ?`,
			o.Name, o.Availability, msPtr(o.ExpiresAt), o.Seats, o.SeatsTaken, ms64(o.UpdatedAt), o.ID)
		return err
	})
	return o, err
}
