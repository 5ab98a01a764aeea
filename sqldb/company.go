package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"parcela"
)

const companyColumns = `id, name, document, slug, email, phone, logo, dark, palette, address_id,
	max_interest_rate, max_installments, min_down_payment_rate, min_down_payment_cents,
	registration_fee, take_rate_type, take_rate_value, fine_rate, monthly_interest_rate,
	min_installment_cents, payment_expiry_hours, installment_issue_days, created_at, updated_at`

// CreateCompany validates and stores a company, filling its id and times.
func (db *DB) CreateCompany(ctx context.Context, c *parcela.Company) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *Tx) error {
		var exists int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM companies WHERE slug = ?`, c.Slug).Scan(&exists); err != nil {
			return err
		}
		if exists > 0 {
			return &parcela.Error{Code: parcela.ECONFLICT, Message: "a company with slug " + c.Slug + " already exists",
				Fields: []parcela.FieldError{{Field: "slug", Code: "taken", Message: "is already taken"}}}
		}
		c.ID = newID()
		c.CreatedAt, c.UpdatedAt = tx.Now, tx.Now
		var addressID any
		if c.Address != nil {
			if err := insertAddress(ctx, tx, c.Address); err != nil {
				return err
			}
			addressID = c.Address.ID
		}
		_, err := tx.exec(ctx, `INSERT INTO companies (`+companyColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.Name, c.Document, c.Slug, c.Email, c.Phone, c.Logo, c.Dark, c.Palette, addressID,
			c.MaxInterestRate.String(), c.MaxInstallments, c.MinDownPaymentRate.String(), c.MinDownPaymentCents,
			c.RegistrationFee.String(), c.TakeRateType, c.TakeRateValue.String(), c.FineRate.String(), c.MonthlyInterestRate.String(),
			c.MinInstallmentCents, c.PaymentExpiryHours, c.InstallmentIssueDays, ms64(c.CreatedAt), ms64(c.UpdatedAt))
		return err
	})
}

type rowScanner interface{ Scan(dest ...any) error }

// scanCompany reads the columns of companyColumns; the address id is
// returned for the caller to load.
func scanCompany(row rowScanner, c *parcela.Company) (addressID sql.NullString, err error) {
	var email, phone sql.NullString
	var created, updated int64
	err = row.Scan(&c.ID, &c.Name, &c.Document, &c.Slug, &email, &phone, &c.Logo, &c.Dark, &c.Palette, &addressID,
		rate(&c.MaxInterestRate), &c.MaxInstallments, rate(&c.MinDownPaymentRate), &c.MinDownPaymentCents,
		rate(&c.RegistrationFee), &c.TakeRateType, rate(&c.TakeRateValue), rate(&c.FineRate), rate(&c.MonthlyInterestRate),
		&c.MinInstallmentCents, &c.PaymentExpiryHours, &c.InstallmentIssueDays, &created, &updated)
	c.Email, c.Phone = nullString(email), nullString(phone)
	c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
	return addressID, err
}

// Company returns one company by id.
func (db *DB) Company(ctx context.Context, id string) (*parcela.Company, error) {
	return companyByID(ctx, db.reader, db, id)
}

// companyByID loads a company with its address, inside or outside a transaction.
func companyByID(ctx context.Context, q querier, db *DB, id string) (*parcela.Company, error) {
	var c parcela.Company
	addressID, err := scanCompany(q.QueryRowContext(ctx, db.rebind(`SELECT `+companyColumns+` FROM companies WHERE id = ?`), id), &c)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("company")
	} else if err != nil {
		return nil, err
	}
	if addressID.Valid {
		if c.Address, err = db.address(ctx, q, addressID.String); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// Companies lists every company, oldest first.
func (db *DB) Companies(ctx context.Context) ([]*parcela.Company, error) {
	rows, err := db.query(ctx, `SELECT id FROM companies ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*parcela.Company, 0, len(ids))
	for _, id := range ids {
		c, err := db.Company(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// CountCompanies tells whether the database has been set up yet.
func (db *DB) CountCompanies(ctx context.Context) (int, error) {
	var n int
	err := db.queryRow(ctx, `SELECT COUNT(*) FROM companies`).Scan(&n)
	return n, err
}

// isUniqueViolation recognises a unique-constraint failure on either engine.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "UNIQUE constraint failed") || strings.Contains(s, "SQLSTATE 23505") || strings.Contains(s, "duplicate key value")
}
