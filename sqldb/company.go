package sqldb

import (
	"context"
	"database/sql"

	"parcela"
)

const companyColumns = `id, name, document, slug, email, phone, logo, dark, palette, address_id,
	max_interest_rate, max_installments, min_down_payment_rate, min_down_payment_cents,
	registration_fee, take_rate_type, take_rate_value, fine_rate, monthly_interest_rate,
	min_installment_cents, payment_expiry_hours, installment_issue_days, boleto_grace_business_days, created_at, updated_at`

// CreateCompany validates and stores a company, filling its id and times.
// Companies are the operator's (the CLI's): no use case stands before this.
func (db *DB) CreateCompany(ctx context.Context, c *parcela.Company) error {
	return db.createCompany(ctx, c, nil, nil)
}

// CreateCompanyWith stores c as CreateCompany does, with a token of env
// for it and the products and offers that catalog builds for it (called
// once c has its id), all in one transaction: a failure or a crash
// halfway leaves no company without them. The demo's setup: committed
// one step at a time, a setup cut short left its company without a
// product or offer (and a token never shown), and every later start took
// the database for one already set up.
func (db *DB) CreateCompanyWith(ctx context.Context, c *parcela.Company, env parcela.Environment,
	catalog func(c *parcela.Company) ([]*parcela.Product, []*parcela.Offer, error)) (*parcela.Token, string, error) {
	var t *parcela.Token
	var plain string
	var products []*parcela.Product
	var offers []*parcela.Offer
	prepare := func() (err error) {
		if t, plain, err = newToken(c.ID, env, db.clock.Now()); err != nil {
			return err
		}
		products, offers, err = catalog(c)
		return err
	}
	err := db.createCompany(ctx, c, prepare, func(tx *Tx) error {
		if err := insertToken(ctx, tx, t); err != nil {
			return err
		}
		for _, p := range products {
			if err := insertProduct(ctx, tx, p); err != nil {
				return err
			}
		}
		for _, o := range offers {
			if err := db.insertOffer(ctx, tx, o); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return t, plain, nil
}

// createCompany is CreateCompany, with more writes (then, when not nil)
// in the company's transaction, prepared (by prepare, when not nil) once
// the company has its id, before the transaction holds the writer.
func (db *DB) createCompany(ctx context.Context, c *parcela.Company, prepare func() error, then func(tx *Tx) error) error {
	if err := c.Validate(); err != nil {
		return err
	}
	var city *parcela.City
	if c.Address != nil {
		var err error
		city, err = db.City(ctx, c.Address.City.IBGECode)
		if parcela.ErrorCode(err) == parcela.ENOTFOUND {
			return &parcela.Error{Code: parcela.EINVALID, Message: "address.city_ibge_code is not a known IBGE municipality",
				Fields: []parcela.FieldError{{Field: "address.city_ibge_code", Code: "not_found", Message: "is not a known IBGE municipality"}}}
		} else if err != nil {
			return err
		}
		a := *c.Address
		a.City = *city
		if err := parcela.CheckZipcodeState("address.zipcode", &a); err != nil {
			return err
		}
	}
	taken := &parcela.Error{Code: parcela.ECONFLICT, Message: "a company with slug " + c.Slug + " already exists",
		Fields: []parcela.FieldError{{Field: "slug", Code: "taken", Message: "is already taken"}}}
	var exists int
	if err := db.reader.queryRow(ctx, `SELECT COUNT(*) FROM companies WHERE slug = ?`, c.Slug).Scan(&exists); err != nil {
		return failed("read company slug", err)
	}
	if exists > 0 {
		return taken
	}
	now := db.clock.Now()
	c.ID, c.CreatedAt, c.UpdatedAt = parcela.NewID(), now, now
	var addressID any
	if c.Address != nil {
		c.Address.ID, c.Address.City, c.Address.CreatedAt, c.Address.UpdatedAt = parcela.NewID(), *city, now, now
		addressID = c.Address.ID
	}
	if prepare != nil {
		if err := prepare(); err != nil {
			return err
		}
	}
	// Whether the company's own insert was written: a conflict after it
	// (then's writes: an offer costing more than its product) is no
	// racing create's slug.
	stored := false
	err := failed("create company", db.inTx(ctx, func(tx *Tx) error {
		stored = false
		p := tx.pipeline()
		if c.Address != nil {
			if err := insertAddress(ctx, p, c.Address); err != nil {
				return err
			}
		}
		err := p.exec(ctx, nil, `INSERT INTO companies (`+companyColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.Name, c.Document, c.Slug, c.Email, c.Phone, c.Logo, c.Dark, c.Palette, addressID,
			c.MaxInterestRate.String(), c.MaxInstallments, c.MinDownPaymentRate.String(), c.MinDownPaymentCents,
			c.RegistrationFee.String(), c.TakeRateType, c.TakeRateValue.String(), c.FineRate.String(), c.MonthlyInterestRate.String(),
			c.MinInstallmentCents, c.PaymentExpiryHours, c.InstallmentIssueDays, c.BoletoGraceBusinessDays, ms64(c.CreatedAt), ms64(c.UpdatedAt))
		if err != nil {
			return err
		}
		if err := p.flush(ctx); err != nil || then == nil {
			return err
		}
		stored = true
		return then(tx)
	}))
	if parcela.IsConflict(err) && !stored {
		return taken // a racing create took the slug
	}
	return err
}

// scanCompany reads the columns of companyColumns; the address id is
// returned for the caller to load.
func scanCompany(row rowScanner, c *parcela.Company) (addressID sql.NullString, err error) {
	var email, phone sql.NullString
	var created, updated int64
	err = row.Scan(&c.ID, &c.Name, &c.Document, &c.Slug, &email, &phone, &c.Logo, &c.Dark, &c.Palette, &addressID,
		rate(&c.MaxInterestRate), &c.MaxInstallments, rate(&c.MinDownPaymentRate), &c.MinDownPaymentCents,
		rate(&c.RegistrationFee), &c.TakeRateType, rate(&c.TakeRateValue), rate(&c.FineRate), rate(&c.MonthlyInterestRate),
		&c.MinInstallmentCents, &c.PaymentExpiryHours, &c.InstallmentIssueDays, &c.BoletoGraceBusinessDays, &created, &updated)
	c.Email, c.Phone = nullString(email), nullString(phone)
	c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
	return addressID, err
}

// Company returns one company by id, with its address.
func (db *DB) Company(ctx context.Context, id string) (*parcela.Company, error) {
	c, err := companyByID(ctx, db.reader, id)
	return c, failed("read company", err)
}

func companyByID(ctx context.Context, r runner, id string) (*parcela.Company, error) {
	return companyWhere(ctx, r, "id", id)
}

// companyWhere reads the company whose unique column (id or slug) is value,
// with its address.
func companyWhere(ctx context.Context, r runner, column, value string) (*parcela.Company, error) {
	var c parcela.Company
	addressID, err := scanCompany(r.queryRow(ctx, `SELECT `+companyColumns+` FROM companies WHERE `+column+` = ?`, value), &c)
	if err != nil {
		return nil, notFound(err, "company")
	}
	if addressID.Valid {
		if c.Address, err = address(ctx, r, addressID.String); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// Companies lists every company, oldest first.
func (db *DB) Companies(ctx context.Context) ([]*parcela.Company, error) {
	ids, err := collect(ctx, db.reader, scanString, `SELECT id FROM companies ORDER BY created_at, id`)
	if err != nil {
		return nil, failed("list companies", err)
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
	err := db.reader.queryRow(ctx, `SELECT COUNT(*) FROM companies`).Scan(&n)
	return n, failed("count companies", err)
}
