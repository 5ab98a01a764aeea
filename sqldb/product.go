package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"parcela"
)

const productSelect = `SELECT p.id, p.company_id, p.environment, p.name, p.description, p.access_period, p.duration_in_days, p.duration_in_hours,
	p.start_date, p.end_date, p.full_amount_cents, p.banner_url, p.google_pixel_code, p.meta_pixel_code, p.metadata, p.availability,
	p.created_at, p.updated_at, k.id, k.name, k.created_at, k.updated_at, s.id, s.name, s.created_at, s.updated_at
	FROM products p JOIN kinds k ON k.id = p.kind_id JOIN shifts s ON s.id = p.shift_id`

func scanProduct(row rowScanner) (*parcela.Product, error) {
	var p parcela.Product
	var env, metadata string
	var desc, start, end, banner sql.NullString
	var days, hours sql.NullInt64
	var created, updated, kc, ku, sc, su int64
	err := row.Scan(&p.ID, &p.CompanyID, &env, &p.Name, &desc, &p.AccessPeriod, &days, &hours, &start, &end, &p.FullAmountCents,
		&banner, &p.GooglePixelCode, &p.MetaPixelCode, &metadata, &p.Availability, &created, &updated,
		&p.Kind.ID, &p.Kind.Name, &kc, &ku, &p.Shift.ID, &p.Shift.Name, &sc, &su)
	if err != nil {
		return nil, err
	}
	p.Environment = parcela.Environment(env)
	p.Description, p.StartDate, p.EndDate, p.BannerURL = nullString(desc), nullString(start), nullString(end), nullString(banner)
	p.DurationInDays, p.DurationInHours = nullInt(days), nullInt(hours)
	p.Metadata = json.RawMessage(metadata)
	p.CreatedAt, p.UpdatedAt = fromMS(created), fromMS(updated)
	p.Kind.CreatedAt, p.Kind.UpdatedAt = fromMS(kc), fromMS(ku)
	p.Shift.CreatedAt, p.Shift.UpdatedAt = fromMS(sc), fromMS(su)
	return &p, nil
}

// named loads a reference table (kinds or shifts) by name.
func named(ctx context.Context, tx *Tx, table string) (map[string]parcela.Named, error) {
	rows, err := tx.query(ctx, `SELECT id, name, created_at, updated_at FROM `+table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]parcela.Named{}
	for rows.Next() {
		var n parcela.Named
		var c, u int64
		if err := rows.Scan(&n.ID, &n.Name, &c, &u); err != nil {
			return nil, err
		}
		n.CreatedAt, n.UpdatedAt = fromMS(c), fromMS(u)
		out[n.Name] = n
	}
	return out, rows.Err()
}

// CreateProduct validates and stores a product of the caller's company.
func (db *DB) CreateProduct(ctx context.Context, a parcela.Auth, in parcela.ProductInput) (*parcela.Product, error) {
	var p *parcela.Product
	err := db.inTx(ctx, func(tx *Tx) error {
		kinds, err := named(ctx, tx, "kinds")
		if err != nil {
			return err
		}
		shifts, err := named(ctx, tx, "shifts")
		if err != nil {
			return err
		}
		p = &parcela.Product{CompanyID: a.CompanyID, Environment: a.Environment, AccessPeriod: parcela.AccessLifetime,
			Availability: "enabled", Kind: kinds["course"], Shift: shifts["online"]}
		var v parcela.Validation
		if in.Name == nil {
			v.Add("product.name", "required", "is required")
		}
		if in.FullAmountCents == nil {
			v.Add("product.full_amount_cents", "required", "is required")
		}
		if err := p.Apply(in, kinds, shifts); err != nil {
			e := err.(*parcela.Error)
			for _, f := range e.Fields {
				if !v.Has(f.Field) {
					v.Add(f.Field, f.Code, f.Message)
				}
			}
		}
		if err := v.Err(); err != nil {
			return err
		}
		p.ID, p.CreatedAt, p.UpdatedAt = newID(), tx.Now, tx.Now
		_, err = tx.exec(ctx, `INSERT INTO products (id, company_id, environment, name, description, kind_id, shift_id, access_period,
			duration_in_days, duration_in_hours, start_date, end_date, full_amount_cents, banner_url, google_pixel_code, meta_pixel_code,
			metadata, availability, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			p.ID, p.CompanyID, string(p.Environment), p.Name, p.Description, p.Kind.ID, p.Shift.ID, p.AccessPeriod,
			p.DurationInDays, p.DurationInHours, p.StartDate, p.EndDate, p.FullAmountCents, p.BannerURL, p.GooglePixelCode,
			p.MetaPixelCode, string(p.Metadata), p.Availability, ms64(p.CreatedAt), ms64(p.UpdatedAt))
		return err
	})
	return p, err
}

// Product returns one of the caller's products; anyone else's is not found.
func (db *DB) Product(ctx context.Context, a parcela.Auth, id string) (*parcela.Product, error) {
	return productByID(ctx, db.reader, db, a, id)
}

func productByID(ctx context.Context, q querier, db *DB, a parcela.Auth, id string) (*parcela.Product, error) {
	p, err := scanProduct(q.QueryRowContext(ctx, db.rebind(productSelect+` WHERE p.id = ? AND p.company_id = ? AND p.environment = ?`),
		id, a.CompanyID, string(a.Environment)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("product")
	}
	return p, err
}

// Products lists the caller's products, newest first.
func (db *DB) Products(ctx context.Context, a parcela.Auth, page, perPage int) ([]*parcela.Product, int, error) {
	var total int
	if err := db.queryRow(ctx, `SELECT COUNT(*) FROM products WHERE company_id = ? AND environment = ?`, a.CompanyID, string(a.Environment)).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.query(ctx, productSelect+` WHERE p.company_id = ? AND p.environment = ? ORDER BY p.created_at DESC, p.id DESC LIMIT ? OFFSET ?`,
		a.CompanyID, string(a.Environment), perPage, (page-1)*perPage)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []*parcela.Product
	for rows.Next() {
		p, err := scanProduct(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, p)
	}
	return out, total, rows.Err()
}

// UpdateProduct patches a product. Lowering its amount below an offer's is
// refused: an offer may never cost more than its product.
func (db *DB) UpdateProduct(ctx context.Context, a parcela.Auth, id string, in parcela.ProductInput) (*parcela.Product, error) {
	var p *parcela.Product
	err := db.inTx(ctx, func(tx *Tx) error {
		var err error
		if p, err = productByID(ctx, tx.q, db, a, id); err != nil {
			return err
		}
		kinds, err := named(ctx, tx, "kinds")
		if err != nil {
			return err
		}
		shifts, err := named(ctx, tx, "shifts")
		if err != nil {
			return err
		}
		if err := p.Apply(in, kinds, shifts); err != nil {
			return err
		}
		var maxOffer sql.NullInt64
		if err := tx.queryRow(ctx, `SELECT MAX(amount_cents) FROM offers WHERE product_id = ?`, p.ID).Scan(&maxOffer); err != nil {
			return err
		}
		if maxOffer.Valid && p.FullAmountCents < maxOffer.Int64 {
			return &parcela.Error{Code: parcela.EINVALID, Message: fmt.Sprintf("product.full_amount_cents must be at least %d, the amount of an offer of this product", maxOffer.Int64),
				Fields: []parcela.FieldError{{Field: "product.full_amount_cents", Code: "too_small", Message: fmt.Sprintf("must be at least %d, the amount of an offer of this product", maxOffer.Int64)}}}
		}
		p.UpdatedAt = tx.Now
		_, err = tx.exec(ctx, `UPDATE products SET name = ?, description = ?, kind_id = ?, shift_id = ?, access_period = ?, duration_in_days = ?,
			duration_in_hours = ?, start_date = ?, end_date = ?, full_amount_cents = ?, banner_url = ?, google_pixel_code = ?, meta_pixel_code = ?,
			metadata = ?, availability = ?, updated_at = ? WHERE id = ?`,
			p.Name, p.Description, p.Kind.ID, p.Shift.ID, p.AccessPeriod, p.DurationInDays, p.DurationInHours, p.StartDate, p.EndDate,
			p.FullAmountCents, p.BannerURL, p.GooglePixelCode, p.MetaPixelCode, string(p.Metadata), p.Availability, ms64(p.UpdatedAt), p.ID)
		return err
	})
	return p, err
}
