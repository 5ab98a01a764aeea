package sqldb

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"parcela"
)

// The payer's lookups. The pages carry no token: an order or a bill is
// found by id within an environment, and the use case compares the code
// read here with the one the payer sent before reading anything personal.

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

// A payer's page shows an offer with its company, product and payment
// configurations: one statement, where it was four (on PostgreSQL four
// round trips). Its first branch is a row of the company (with its
// address), the offer and the product; its second a row per
// configuration. Each leaves the other's columns NULL: repeating the
// offer's columns on every configuration's row cost SQLite more than the
// statements saved.
var (
	offerHeadColumns = prefixColumns("co.", companyColumns) + ", " + prefixColumns("o.", offerColumns) + ", " + productColumns + ", " +
		realias(addressColumns, map[string]string{"a": "ca", "c": "cc", "s": "cs"})
	companyWidth, offerWidth, productWidth = columnCount(companyColumns), columnCount(offerColumns), columnCount(productColumns)
	addressWidth, configurationWidth       = columnCount(addressColumns), columnCount(configurationColumns)
	offerHeadWidth                         = companyWidth + offerWidth + productWidth + addressWidth
	// productColumns are productSelect's, aliased p, k and s.
	productColumns, _, _ = strings.Cut(strings.TrimPrefix(productSelect, "SELECT "), "FROM products p")
)

// offerPageJoins joins the company (aliased co) to its offer o, whose
// conditions the WHERE adds, the offer to its product, and the company to
// its address (aliased ca, its city cc and state cs), if it has one. No
// page shows the address, but the company is read whole: read apart, it
// cost every page and order of a company with one more statement (on
// PostgreSQL a round trip).
const offerPageJoins = ` JOIN offers o ON o.company_id = co.id
	JOIN products p ON p.id = o.product_id AND p.company_id = o.company_id AND p.environment = o.environment
	JOIN kinds k ON k.id = p.kind_id JOIN shifts s ON s.id = p.shift_id
	LEFT JOIN addresses ca ON ca.id = co.address_id LEFT JOIN cities cc ON cc.id = ca.city_id LEFT JOIN states cs ON cs.id = cc.state_id`

// offerPageQuery is an offer page's statement: the head whose company
// (co) and offer (o) match where, led by the company's catalog version
// (offerCache), then the configurations of the offer that offerID (a
// placeholder or a subquery) names.
func offerPageQuery(where, offerID string) string {
	return `SELECT ` + pack(`co.catalog_version, `+offerHeadColumns+`, `+nulls(configurationWidth)) + ` FROM companies co` + offerPageJoins + `
		WHERE ` + where + `
		UNION ALL SELECT ` + pack(`NULL, `+nulls(offerHeadWidth)+`, `+prefixColumns("pc.", configurationColumns)) + `
		FROM payment_configurations pc WHERE pc.offer_id = ` + offerID
}

var (
	publicOfferRead = newOfferStatements(`co.slug = ? AND o.id = ? AND o.environment = ?`, `?`, 3)
	// A checkout reads the bill's key and its order's offer as offerRead's
	// narrow statement does (the offer itself then comes from the cache,
	// or offerRead); the billing, with its configuration's id, comes with
	// the bill (PayerBill).
	billOfferQuery = `SELECT b.company_id, b.order_id, b.authentication_code, o.id, co.catalog_version, o.seats_taken
		FROM bills b JOIN orders od ON od.id = b.order_id JOIN companies co ON co.id = b.company_id JOIN offers o ON o.company_id = co.id
		JOIN products p ON p.id = o.product_id AND p.company_id = o.company_id AND p.environment = o.environment
		WHERE b.id = ? AND b.environment = ? AND o.id = od.offer_id AND o.environment = b.environment`
)

// nulls is n NULL columns.
func nulls(n int) string { return strings.Repeat("NULL, ", n-1) + "NULL" }

// PublicOffer returns the offer id of env whose company's links carry
// slug, with its product, company and configurations.
func (db *DB) PublicOffer(ctx context.Context, env parcela.Environment, slug, id string) (*parcela.Offer, error) {
	o, err := db.cachedOffer(ctx, db.reader, publicOfferRead, slug, id, string(env), id)
	return o, failed("read offer", notFound(err, "offer"))
}

// PayerBill finds a bill of env for its payer: its key, as BillKey, which
// opens judges; then, if it opens, the bill as Bill reads it, its billing
// with its configuration, and its order's offer with its product and
// company but without its configurations (what the public offer page
// shows). A key that does not open is not_found, and nothing of the bill
// leaves here.
//
// On PostgreSQL the key's statement and the bill's go in one round trip
// (readPipeline), and the bill read is dropped when the key does not open.
// On SQLite, in process, the bill is read only after the key opens. Read
// in the key's statement (a UNION), the bill cost the checkout more than
// the statement it saved (docs/performance.md, nineteenth pass).
func (db *DB) PayerBill(ctx context.Context, env parcela.Environment, id string, opens func(parcela.PayerKey) bool) (*parcela.Bill, *parcela.Offer, error) {
	bill, o, err := db.payerBill(ctx, env, id, opens)
	return bill, o, failed("read bill", notFound(err, "bill"))
}

func (db *DB) payerBill(ctx context.Context, env parcela.Environment, id string, opens func(parcela.PayerKey) bool) (*parcela.Bill, *parcela.Offer, error) {
	k := parcela.PayerKey{Owned: parcela.Owned{ID: id, Auth: parcela.Auth{Environment: env}}}
	var v offerVersion
	p := db.readPipeline()
	err := p.queryRow(ctx, func(row rowScanner) error {
		return row.Scan(&k.Auth.CompanyID, &k.OrderID, &k.Code, &v.id, &v.version, &v.taken)
	}, billOfferQuery, id, string(env))
	if err != nil {
		return nil, nil, err
	}
	rows := newBillRows(false)
	readBill := func() error {
		return p.query(ctx, rows.scan, billPageSelect+` FROM bills b `+billPageJoins+` WHERE b.id = ? AND b.environment = ?`, id, string(env))
	}
	pipelined := p.batch != nil
	if pipelined {
		if err := readBill(); err != nil {
			return nil, nil, err
		}
	}
	if err := p.flush(ctx); err != nil {
		return nil, nil, err
	}
	k.OfferID = v.id
	if !opens(k) {
		return nil, nil, sql.ErrNoRows
	}
	if !pipelined {
		if err := readBill(); err != nil {
			return nil, nil, err
		}
	}
	bills, _ := rows.result()
	if len(bills) != 1 || bills[0].CompanyID != k.Auth.CompanyID {
		return nil, nil, sql.ErrNoRows // removed between the two statements
	}
	bill := bills[0]
	o, err := db.offerAt(ctx, db.reader, offerRead, v, k.Auth.CompanyID, v.id, string(env), v.id)
	if err != nil {
		return nil, nil, err
	}
	// The billing's configuration is one of its offer's, or none.
	for _, c := range o.PaymentConfigurations {
		if c.ID == bill.Billing.PaymentConfigurationID {
			bill.Billing.PaymentConfiguration = c
		}
	}
	o.PaymentConfigurations = nil
	return bill, o, nil
}

// collectOfferPage runs an offer page's statement, whose rows are lead's
// columns then offerHeadColumns and configurationColumns, and scans the
// head's lead into lead. No head is sql.ErrNoRows.
func collectOfferPage(ctx context.Context, r runner, lead []any, q string, args ...any) (*parcela.Offer, error) {
	page := newOfferPageRows(lead)
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if err := scanEach(rows, page.scan); err != nil {
		return nil, err
	}
	return page.offer()
}

// offerPageRows gathers an offer page's rows: lead's columns, then
// offerHeadColumns and configurationColumns (see offerHeadColumns).
type offerPageRows struct {
	lead    []any
	row     rawRow
	dests   []any
	o       *parcela.Offer
	configs []*parcela.PaymentConfiguration
}

func newOfferPageRows(lead []any) *offerPageRows {
	row := make(rawRow, len(lead)+offerHeadWidth+configurationWidth)
	return &offerPageRows{lead: lead, row: row, dests: row.dests()}
}

// scan reads one row: the head, or a configuration.
func (p *offerPageRows) scan(rows rowScanner) error {
	if err := rows.Scan(p.dests...); err != nil {
		return err
	}
	if p.row[len(p.lead)] != nil { // the company's id: the head
		var err error
		p.o, err = scanOfferPage(p.row, p.lead)
		return err
	}
	pc, err := scanConfiguration(p.row[len(p.row)-configurationWidth:])
	if err != nil {
		return err
	}
	p.configs = append(p.configs, pc)
	return nil
}

// offer is the offer read, with its configurations; no head is
// sql.ErrNoRows.
func (p *offerPageRows) offer() (*parcela.Offer, error) {
	if p.o == nil {
		return nil, sql.ErrNoRows
	}
	// Ordered here: an ORDER BY would run the rows through a sorter.
	slices.SortFunc(p.configs, func(x, y *parcela.PaymentConfiguration) int {
		return cmp.Or(cmp.Compare(x.Position, y.Position), strings.Compare(x.ID, y.ID))
	})
	p.o.PaymentConfigurations = p.configs
	return p.o, nil
}

// scanOfferPage reads lead, the company, the offer, its product and the
// company's address from an offer page's row.
func scanOfferPage(row rawRow, lead []any) (*parcela.Offer, error) {
	next := func(n int) rawRow {
		part := row[:n]
		row = row[n:]
		return part
	}
	if err := next(len(lead)).Scan(lead...); err != nil {
		return nil, err
	}
	c := new(parcela.Company)
	addressID, err := scanCompany(next(companyWidth), c)
	if err != nil {
		return nil, err
	}
	o, err := scanOffer(next(offerWidth))
	if err != nil {
		return nil, err
	}
	if o.Product, err = scanProduct(next(productWidth)); err != nil {
		return nil, err
	}
	o.Product.Company = c
	addr := next(addressWidth)
	if addressID.Valid != (addr[0] != nil) {
		return nil, fmt.Errorf("sqldb: company %s's address %q was not read with it", c.ID, addressID.String)
	}
	if addressID.Valid {
		c.Address = new(parcela.Address)
		dests, finish := addressFields(c.Address)
		if err := addr.Scan(dests...); err != nil {
			return nil, err
		}
		finish()
	}
	return o, nil
}

// realias renames the table aliases of a list of qualified columns
// ("a.id, c.name" with {a: ca, c: cc} is "ca.id, cc.name").
func realias(columns string, aliases map[string]string) string {
	names := strings.Split(columns, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
		if alias, column, ok := strings.Cut(names[i], "."); ok && aliases[alias] != "" {
			names[i] = aliases[alias] + "." + column
		}
	}
	return strings.Join(names, ", ")
}

// prefixColumns qualifies each of a list of plain column names.
func prefixColumns(prefix, columns string) string {
	names := strings.Split(columns, ",")
	for i, n := range names {
		names[i] = prefix + strings.TrimSpace(n)
	}
	return strings.Join(names, ", ")
}

// columnCount counts a list's columns by its commas (none is an expression).
func columnCount(columns string) int { return strings.Count(columns, ",") + 1 }
