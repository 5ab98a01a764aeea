package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"

	"parcela"
)

const productSelect = `SELECT p.id, p.company_id, p.environment, p.name, p.description, p.access_period, p.duration_in_days, p.duration_in_hours,
	p.start_date, p.end_date, p.full_amount_cents, p.banner_url, p.google_pixel_code, p.meta_pixel_code, p.metadata, p.availability,
	p.created_at, p.updated_at, p.version, k.id, k.name, k.created_at, k.updated_at, s.id, s.name, s.created_at, s.updated_at
	FROM products p JOIN kinds k ON k.id = p.kind_id JOIN shifts s ON s.id = p.shift_id`

func scanProduct(row rowScanner) (*parcela.Product, error) {
	var p parcela.Product
	var env, metadata string
	var desc, start, end, banner sql.NullString
	var days, hours sql.NullInt64
	var created, updated, kc, ku, sc, su int64
	err := row.Scan(&p.ID, &p.CompanyID, &env, &p.Name, &desc, &p.AccessPeriod, &days, &hours, &start, &end, &p.FullAmountCents,
		&banner, &p.GooglePixelCode, &p.MetaPixelCode, &metadata, &p.Availability, &created, &updated, &p.Version,
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

func scanNamed(row rowScanner) (parcela.Named, error) {
	var n parcela.Named
	var c, u int64
	err := row.Scan(&n.ID, &n.Name, &c, &u)
	n.CreatedAt, n.UpdatedAt = fromMS(c), fromMS(u)
	return n, err
}

// ProductReferences reads the product kinds and shifts, by name.
func (db *DB) ProductReferences(ctx context.Context) (kinds, shifts map[string]parcela.Named, err error) {
	byName := func(q string) (map[string]parcela.Named, error) {
		rows, err := collect(ctx, db.reader, scanNamed, q)
		out := make(map[string]parcela.Named, len(rows))
		for _, n := range rows {
			out[n.Name] = n
		}
		return out, err
	}
	if kinds, err = byName(`SELECT id, name, created_at, updated_at FROM kinds`); err != nil {
		return nil, nil, failed("read product kinds", err)
	}
	shifts, err = byName(`SELECT id, name, created_at, updated_at FROM shifts`)
	return kinds, shifts, failed("read product shifts", err)
}

// CreateProduct stores a new product.
func (db *DB) CreateProduct(ctx context.Context, p *parcela.Product) error {
	return failed("create product", db.inTxOf(ctx, parcela.Auth{CompanyID: p.CompanyID, Environment: p.Environment}, func(tx *Tx) error { return insertProduct(ctx, tx, p) }))
}

// insertProduct stores p in tx.
func insertProduct(ctx context.Context, tx *Tx, p *parcela.Product) error {
	_, err := tx.r.exec(ctx, `INSERT INTO products (id, company_id, environment, name, description, kind_id, shift_id, access_period,
		duration_in_days, duration_in_hours, start_date, end_date, full_amount_cents, banner_url, google_pixel_code, meta_pixel_code,
		metadata, availability, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.CompanyID, string(p.Environment), p.Name, p.Description, p.Kind.ID, p.Shift.ID, p.AccessPeriod,
		p.DurationInDays, p.DurationInHours, p.StartDate, p.EndDate, p.FullAmountCents, p.BannerURL, p.GooglePixelCode,
		p.MetaPixelCode, string(p.Metadata), p.Availability, ms64(p.CreatedAt), ms64(p.UpdatedAt))
	return err
}

// Product returns one of the caller's products; anyone else's is not found.
func (db *DB) Product(ctx context.Context, a parcela.Auth, id string) (*parcela.Product, error) {
	p, err := scanProduct(db.reader.queryRow(ctx, productSelect+` WHERE p.id = ? AND p.company_id = ? AND p.environment = ?`,
		id, a.CompanyID, string(a.Environment)))
	return p, failed("read product", notFound(err, "product"))
}

// Products lists the caller's products, newest first. The count is read
// in the page's session, as the offers' is: read before the gate (ungated
// on PostgreSQL), a company's listings at once each held a pool connection
// counting its catalog.
func (db *DB) Products(ctx context.Context, a parcela.Auth, p parcela.Page) ([]*parcela.Product, int, error) {
	r, done, err := db.reader.pagesOf(a, p).session(ctx)
	if err != nil {
		return nil, 0, failed("list products", err)
	}
	defer done()
	var total int
	if err := r.queryRow(ctx, `SELECT COUNT(*) FROM products WHERE company_id = ? AND environment = ?`, a.CompanyID, string(a.Environment)).Scan(&total); err != nil {
		return nil, 0, failed("count products", err)
	}
	out, err := collect(ctx, r, scanProduct, productSelect+` WHERE p.company_id = ? AND p.environment = ? ORDER BY p.created_at DESC, p.id DESC LIMIT ? OFFSET ?`,
		a.CompanyID, string(a.Environment), p.PerPage, (p.Page-1)*p.PerPage)
	return out, atLeastShown(total, p, len(out)), failed("list products", err)
}

// MaxOfferAmount is the highest amount of a product's offers.
func (db *DB) MaxOfferAmount(ctx context.Context, productID string) (int64, bool, error) {
	var most sql.NullInt64
	err := db.reader.queryRow(ctx, `SELECT MAX(amount_cents) FROM offers WHERE product_id = ?`, productID).Scan(&most)
	return most.Int64, most.Valid, failed("read the offers' amounts", err)
}

// UpdateProduct writes a product's fields if it is still at the version
// the PATCH was decided on, and bumps it, unless an offer of it now costs
// more than its full amount (either is a conflict: the product is decided
// again).
// The row is locked by a statement of its own first: an offer being
// created share-locks it (CreateOffer), and on PostgreSQL only a statement
// begun after that offer committed sees it. FOR NO KEY UPDATE: what only refers
// to the product (its key) does not wait for it.
func (db *DB) UpdateProduct(ctx context.Context, p *parcela.Product) error {
	return failed("update product", db.inTxOf(ctx, parcela.Auth{CompanyID: p.CompanyID, Environment: p.Environment}, func(tx *Tx) error {
		var id string
		if err := tx.r.queryRow(ctx, `SELECT id FROM products WHERE id = ?`+db.lockRows("NO KEY UPDATE"), p.ID).Scan(&id); err != nil {
			return notFound(err, "product")
		}
		return tx.r.guarded(ctx, "product", p.ID, `UPDATE products SET name = ?, description = ?, kind_id = ?, shift_id = ?, access_period = ?,
			duration_in_days = ?, duration_in_hours = ?, start_date = ?, end_date = ?, full_amount_cents = ?, banner_url = ?, google_pixel_code = ?,
			meta_pixel_code = ?, metadata = ?, availability = ?, updated_at = ?, version = version + 1
			WHERE id = ? AND version = ? AND NOT EXISTS (SELECT 1 FROM offers WHERE product_id = ? AND amount_cents > ?)`,
			p.Name, p.Description, p.Kind.ID, p.Shift.ID, p.AccessPeriod, p.DurationInDays, p.DurationInHours, p.StartDate, p.EndDate,
			p.FullAmountCents, p.BannerURL, p.GooglePixelCode, p.MetaPixelCode, string(p.Metadata), p.Availability, ms64(p.UpdatedAt),
			p.ID, p.Version, p.ID, p.FullAmountCents)
	}))
}
