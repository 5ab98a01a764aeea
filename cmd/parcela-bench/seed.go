package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"parcela"
	"parcela/sqldb"
)

// The seeded world: several companies, each with one product and one offer
// (upfront and financed bolepix configurations); ~80% of the rows belong to
// the benchmarked company's sandbox. Every billing is financed in 12 bills
// (a down payment and 11 monthly installments) charged between 14 months
// and 1 month ago, so due dates spread over two years around now. Bills
// past due are mostly paid, some overdue (with their expired and re-issued
// payments), billings are sometimes canceled midway, and bills in the
// future are pending, with an unpaid payment once inside the company's
// issue window. Those are exactly the states the server's own sweeps would
// leave, so the sweeps find nothing to do while the scenarios run.

const (
	benchSlug     = "bench-0"
	chunkBillings = 1000 // billings per transaction
	installments  = 12
)

// SeedReport is what seeding did and how long it took.
type SeedReport struct {
	Bills          int     `json:"bills"`
	Billings       int     `json:"billings"`
	Orders         int     `json:"orders"`
	Payments       int     `json:"payments"`
	Companies      int     `json:"companies"`
	Seconds        float64 `json:"seconds"`
	RowsPerSecond  float64 `json:"rows_per_second"`
	BenchmarkBills int     `json:"benchmarked_company_bills"`
	Reused         bool    `json:"reused,omitempty"`
}

// seeded is what the scenarios need from the seeded database.
type seeded struct {
	SeedReport
	token       string
	companyID   string
	companySlug string
	offerID     string
	financedID  string
	billIDs     []string   // a uniform sample of the benchmarked company's bills
	openBills   []openBill // a uniform sample of its pending and overdue bills
	now         time.Time
}

type table struct {
	name string
	cols []string
}

// The tables in foreign-key order, with the columns the bulk path fills
// (the rest keep their schema defaults or NULL).
var tables = []table{
	{"addresses", []string{"id", "zipcode", "street", "number", "complement", "neighborhood", "city_id", "created_at", "updated_at"}},
	{"orders", []string{"id", "company_id", "environment", "offer_id", "status", "customer_name", "customer_birthdate", "customer_document",
		"email", "phone", "address_id", "cancelation_reason", "created_at", "updated_at"}},
	{"billings", []string{"id", "company_id", "environment", "order_id", "payment_configuration_id", "amount_cents", "due_day", "installments",
		"status", "cancelation_reason", "finished_at", "signature_remote_ip", "signature_user_agent", "created_at", "updated_at"}},
	{"bills", []string{"id", "company_id", "environment", "billing_id", "order_id", "number", "bill_type", "status", "amount_cents", "due_date",
		"effective_due_date", "paid_at", "authentication_code", "down_payment_cents", "registration_fee_cents", "amortization_cents",
		"interest_cents", "created_at", "updated_at"}},
	{"payments", []string{"id", "company_id", "environment", "bill_id", "payment_method", "status", "amount_cents", "paid_amount_cents",
		"paid_at", "expires_at", "installments", "nosso_numero", "barcode", "barcode_digits", "pix_code", "created_at", "updated_at"}},
}

const (
	tAddresses = iota
	tOrders
	tBillings
	tBills
	tPayments
)

// rowsPerStatement keeps a multi-row INSERT under both engines' limits on
// bound parameters.
func rowsPerStatement(cols int) int { return min(500, 30000/cols) }

// insertSQL is a multi-row INSERT of rows rows.
func insertSQL(d sqldb.Dialect, t table, rows int) string {
	var b strings.Builder
	b.Grow(len(t.cols) * rows * 5)
	b.WriteString("INSERT INTO " + t.name + " (" + strings.Join(t.cols, ", ") + ") VALUES ")
	n := 0
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range t.cols {
			if c > 0 {
				b.WriteString(", ")
			}
			n++
			if d == sqldb.Postgres {
				b.WriteString("$" + strconv.Itoa(n))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// company is one seeded company with its offer.
type company struct {
	id, name, env string
	offerID       string
	financedID    string
	pixKey        string
	bench         bool
	billings      int // seeded, for the offer's seats_taken
}

const productJSON = `{"name": "Curso de Confeitaria", "full_amount_cents": 150000, "description": "Do básico ao avançado",
	"kind": "course", "shift": "evening", "access_period": "days", "duration_in_days": 365, "duration_in_hours": 120,
	"metadata": {"sku": "CONF-1"}}`

// offerJSON is the server tests' fixture offer without a seat limit, so
// the charge scenario never sells out.
const offerJSON = `{"offer": {"name": "Turma de janeiro", "product_id": %q, "amount_cents": 120000},
	"payment_configurations": [
		{"payment_type": "upfront", "payment_methods": ["pix", "boleto"], "expires_in_hours": 48},
		{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": ["boleto"],
		 "allowed_down_payment_methods": ["pix", "boleto"], "down_payment_type": "percentage",
		 "down_payment_value": 0.2, "interest_rate": 0.0299, "max_installments": 12,
		 "registration_fee": 0.05, "expires_in_hours": 72}]}`

func createCompany(ctx context.Context, db *sqldb.DB, i int, env parcela.Environment) (*company, error) {
	c := parcela.NewCompany(fmt.Sprintf("Escola Bench %d", i), "11222333000181", fmt.Sprintf("bench-%d", i))
	email, phone := fmt.Sprintf("contato@bench%d.parcela.dev", i), "11987654321"
	c.Email, c.Phone = &email, &phone
	// An address, as the demo's company and most sellers' have: the
	// offer's row reads it with the company.
	complement := "Sala 42"
	c.Address = &parcela.Address{Zipcode: "01310100", Street: "Avenida Paulista", Number: "1000", Complement: &complement,
		Neighborhood: "Bela Vista", City: parcela.City{IBGECode: "3550308"}}
	if err := db.CreateCompany(ctx, &c); err != nil {
		return nil, fmt.Errorf("create company: %w", err)
	}
	a := parcela.Auth{CompanyID: c.ID, Environment: env}
	var pin parcela.ProductInput
	if err := json.Unmarshal([]byte(productJSON), &pin); err != nil {
		return nil, err
	}
	catalog := parcela.NewCatalog(db, parcela.SystemClock{})
	p, err := catalog.CreateProduct(ctx, a, pin)
	if err != nil {
		return nil, fmt.Errorf("create product: %w", err)
	}
	var oreq parcela.OfferRequest
	if err := json.Unmarshal(fmt.Appendf(nil, offerJSON, p.ID), &oreq); err != nil {
		return nil, err
	}
	o, err := catalog.CreateOffer(ctx, a, oreq)
	if err != nil {
		return nil, fmt.Errorf("create offer: %w", err)
	}
	out := &company{id: c.ID, name: c.Name, env: string(env), offerID: o.ID, pixKey: uuid.NewSHA1(uuid.NameSpaceURL, []byte(c.ID)).String(), bench: i == 0}
	for _, pc := range o.PaymentConfigurations {
		if pc.PaymentType == parcela.Financed {
			out.financedID = pc.ID
		}
	}
	if out.financedID == "" {
		return nil, errors.New("the offer has no financed configuration")
	}
	return out, nil
}

// seed fills a migrated database at dsn with about bills bills.
func seed(ctx context.Context, dsn string, bills, companies int, reuse bool, logf func(string, ...any)) (*seeded, error) {
	start := time.Now()
	db, err := sqldb.Open(ctx, dsn, sqldb.Config{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return nil, err
	}
	if reuse {
		s, err := loadSeeded(ctx, db)
		if err != nil || s != nil {
			return s, err
		}
		logf("--reuse: the database has no parcela-bench data; seeding it")
	} else if n, err := db.CountCompanies(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		return nil, errors.New("the database already has companies; pass --reuse to reuse a parcela-bench database, or remove it")
	}

	var cs []*company
	for i := range companies {
		env := parcela.Sandbox
		if i%2 == 0 && i > 0 {
			env = parcela.Production
		}
		c, err := createCompany(ctx, db, i, env)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	_, token, err := db.CreateToken(ctx, cs[0].id, parcela.Sandbox)
	if err != nil {
		return nil, err
	}
	cities, err := cityIDs(ctx, db.SQLDB(), db.Dialect())
	if err != nil {
		return nil, err
	}

	raw := db.SQLDB()
	if db.Dialect() == sqldb.SQLite {
		// The bulk load runs on the writer's one connection; a big page
		// cache keeps the random index inserts in memory. The server opens
		// its own connections with the usual settings afterwards. Its
		// commits still sync: the writer gathers its log writes, which
		// needs every commit synced, and refuses synchronous=OFF.
		for _, p := range []string{"PRAGMA cache_size=-400000", "PRAGMA temp_store=MEMORY"} {
			if _, err := raw.ExecContext(ctx, p); err != nil {
				return nil, err
			}
		}
	}

	// Secondary indexes are dropped for the load and rebuilt from their own
	// definitions afterwards (one sorted build each instead of a million
	// random inserts); the schema ends exactly as migrated.
	indexes, err := dropIndexes(ctx, raw, db.Dialect())
	if err != nil {
		return nil, err
	}
	// So are the bills' count triggers: the counts are rebuilt in one
	// grouped pass (RecountBills) instead of a delta per bill.
	triggers, err := dropTriggers(ctx, raw, db.Dialect())
	if err != nil {
		_ = restoreIndexes(context.WithoutCancel(ctx), raw, indexes)
		return nil, err
	}
	rebuilt := false
	defer func() {
		if !rebuilt {
			_ = restoreIndexes(context.WithoutCancel(ctx), raw, append(indexes, triggers...))
		}
	}()

	now := time.Now()
	g := newGenerator(cs, cities, now)
	nBillings := (bills + installments - 1) / installments
	chunks := make(chan *chunk, 2)
	genErr := make(chan error, 1)
	genCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(chunks)
		for done := 0; done < nBillings; done += chunkBillings {
			c, err := g.chunk(genCtx, min(chunkBillings, nBillings-done))
			if err != nil {
				genErr <- err
				return
			}
			select {
			case chunks <- c:
			case <-genCtx.Done():
				return
			}
		}
	}()
	w := &writer{db: raw, pool: db.PgxPool(), dialect: db.Dialect(), stmts: map[int]*sql.Stmt{}}
	defer w.close()
	rep := SeedReport{Companies: len(cs)}
	lastLog := time.Now()
	for c := range chunks {
		if err := w.write(ctx, c); err != nil {
			return nil, fmt.Errorf("bulk insert: %w", err)
		}
		rep.Billings += c.counts[tBillings]
		rep.Orders += c.counts[tOrders]
		rep.Bills += c.counts[tBills]
		rep.Payments += c.counts[tPayments]
		if time.Since(lastLog) > 10*time.Second {
			logf("  %d of %d bills (%.0f s)", rep.Bills, nBillings*installments, time.Since(start).Seconds())
			lastLog = time.Now()
		}
	}
	select {
	case err := <-genErr:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := restoreIndexes(ctx, raw, append(indexes, triggers...)); err != nil {
		return nil, fmt.Errorf("rebuild indexes: %w", err)
	}
	rebuilt = true
	logf("  %d indexes and %d triggers rebuilt in %.1f s", len(indexes), len(triggers), time.Since(t0).Seconds())
	t0 = time.Now()
	if err := db.RecountBills(ctx); err != nil {
		return nil, fmt.Errorf("count bills: %w", err)
	}
	logf("  bills counted by day in %.1f s", time.Since(t0).Seconds())
	// Bookkeeping the server relies on: boleto numbers continue after the
	// seeded ones, and the offers count their sold seats.
	if _, err := raw.ExecContext(ctx, rebind(db.Dialect(), `UPDATE counters SET value = ? WHERE name = 'nosso_numero'`), g.nosso); err != nil {
		return nil, err
	}
	for _, c := range cs {
		if _, err := raw.ExecContext(ctx, rebind(db.Dialect(), `UPDATE offers SET seats_taken = ? WHERE id = ?`), c.billings, c.offerID); err != nil {
			return nil, err
		}
	}
	if db.Dialect() == sqldb.SQLite {
		if _, err := raw.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return nil, err
		}
	} else if _, err := raw.ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
		// What autovacuum would do after a bulk load; it also sets the
		// visibility map that index-only scans need.
		return nil, err
	}
	rep.Seconds = time.Since(start).Seconds()
	rows := rep.Bills + rep.Payments + rep.Billings + 2*rep.Orders
	rep.RowsPerSecond = float64(rows) / rep.Seconds
	rep.BenchmarkBills = cs[0].billings * installments
	return &seeded{SeedReport: rep, token: token, companyID: cs[0].id, companySlug: benchSlug, offerID: cs[0].offerID, financedID: cs[0].financedID,
		billIDs: g.sample, openBills: g.open, now: now}, nil
}

// bulkTables are the tables the bulk path fills.
var bulkTables = []string{"addresses", "orders", "billings", "bills", "payments"}

// dropIndexes drops the secondary indexes of the bulk tables (not those
// behind PRIMARY KEY or UNIQUE constraints) and returns their definitions.
func dropIndexes(ctx context.Context, raw *sql.DB, d sqldb.Dialect) ([]string, error) {
	q := `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('` + strings.Join(bulkTables, "', '") + `') ORDER BY name`
	if d == sqldb.Postgres {
		q = `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN ('` + strings.Join(bulkTables, "', '") + `')
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = indexname) ORDER BY indexname`
	}
	rows, err := raw.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			rows.Close()
			return nil, err
		}
		names, defs = append(names, name), append(defs, def)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, name := range names {
		if _, err := raw.ExecContext(ctx, "DROP INDEX "+name); err != nil {
			_ = restoreIndexes(context.WithoutCancel(ctx), raw, defs[:i])
			return nil, err
		}
	}
	return defs, nil
}

// dropTriggers drops the triggers of the bulk tables and returns their
// definitions, for restoreIndexes to re-create.
func dropTriggers(ctx context.Context, raw *sql.DB, d sqldb.Dialect) ([]string, error) {
	q := `SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('` + strings.Join(bulkTables, "', '") + `') ORDER BY name`
	if d == sqldb.Postgres {
		q = `SELECT t.tgname, c.relname, pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			WHERE NOT t.tgisinternal AND c.relname IN ('` + strings.Join(bulkTables, "', '") + `') ORDER BY t.tgname`
	}
	rows, err := raw.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	var drops, defs []string
	for rows.Next() {
		var name, table, def string
		if err := rows.Scan(&name, &table, &def); err != nil {
			rows.Close()
			return nil, err
		}
		drop := "DROP TRIGGER " + name
		if d == sqldb.Postgres {
			drop += " ON " + table
		}
		drops, defs = append(drops, drop), append(defs, def)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, drop := range drops {
		if _, err := raw.ExecContext(ctx, drop); err != nil {
			_ = restoreIndexes(context.WithoutCancel(ctx), raw, defs[:i])
			return nil, err
		}
	}
	return defs, nil
}

func restoreIndexes(ctx context.Context, raw *sql.DB, defs []string) error {
	for _, def := range defs {
		if _, err := raw.ExecContext(ctx, def); err != nil {
			return fmt.Errorf("%s: %w", def, err)
		}
	}
	return nil
}

// loadSeeded picks up a database seeded earlier (nil when there is none).
func loadSeeded(ctx context.Context, db *sqldb.DB) (*seeded, error) {
	raw, d := db.SQLDB(), db.Dialect()
	s := &seeded{now: time.Now(), companySlug: benchSlug}
	err := raw.QueryRowContext(ctx, rebind(d, `SELECT id FROM companies WHERE slug = ?`), benchSlug).Scan(&s.companyID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	err = raw.QueryRowContext(ctx, rebind(d, `SELECT o.id, pc.id FROM offers o JOIN payment_configurations pc ON pc.offer_id = o.id
		WHERE o.company_id = ? AND o.environment = 'sandbox' AND pc.payment_type = 'financed' ORDER BY o.created_at LIMIT 1`), s.companyID).
		Scan(&s.offerID, &s.financedID)
	if err != nil {
		return nil, fmt.Errorf("reuse: the benchmarked offer: %w", err)
	}
	if _, s.token, err = db.CreateToken(ctx, s.companyID, parcela.Sandbox); err != nil {
		return nil, err
	}
	for _, q := range []struct {
		dst *int
		sql string
	}{
		{&s.Bills, `SELECT COUNT(*) FROM bills`}, {&s.Billings, `SELECT COUNT(*) FROM billings`}, {&s.Orders, `SELECT COUNT(*) FROM orders`},
		{&s.Payments, `SELECT COUNT(*) FROM payments`}, {&s.Companies, `SELECT COUNT(*) FROM companies`},
	} {
		if err := raw.QueryRowContext(ctx, q.sql).Scan(q.dst); err != nil {
			return nil, err
		}
	}
	rows, err := raw.QueryContext(ctx, rebind(d, `SELECT id FROM bills WHERE company_id = ? AND environment = 'sandbox' ORDER BY random() LIMIT 100000`), s.companyID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		s.billIDs = append(s.billIDs, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	s.Reused, s.BenchmarkBills = true, len(s.billIDs)
	open, err := raw.QueryContext(ctx, rebind(d, `SELECT id, authentication_code FROM bills WHERE company_id = ? AND environment = 'sandbox'
		AND status IN ('pending', 'overdue') ORDER BY random() LIMIT `+strconv.Itoa(openSampleSize)), s.companyID)
	if err != nil {
		return nil, err
	}
	defer open.Close()
	for open.Next() {
		var b openBill
		if err := open.Scan(&b.id, &b.code); err != nil {
			return nil, err
		}
		s.openBills = append(s.openBills, b)
	}
	return s, open.Err()
}

func cityIDs(ctx context.Context, raw *sql.DB, d sqldb.Dialect) ([]string, error) {
	rows, err := raw.QueryContext(ctx, `SELECT id FROM cities ORDER BY ibge_code`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	if len(out) == 0 {
		return nil, errors.New("no cities: the reference data is missing")
	}
	return out, rows.Err()
}

// rebind turns "?" into PostgreSQL's "$n".
func rebind(d sqldb.Dialect, q string) string {
	if d != sqldb.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// writer inserts chunks, one transaction each: on PostgreSQL with COPY, on
// SQLite with prepared full-size multi-row INSERTs.
type writer struct {
	db      *sql.DB
	pool    *pgxpool.Pool // PostgreSQL only
	dialect sqldb.Dialect
	stmts   map[int]*sql.Stmt
}

func (w *writer) close() {
	for _, s := range w.stmts {
		s.Close()
	}
}

func (w *writer) write(ctx context.Context, c *chunk) error {
	if w.pool != nil {
		return w.copy(ctx, c)
	}
	// Prepared before the transaction: on SQLite the writer pool is one
	// connection, which the transaction holds.
	for ti, t := range tables {
		if w.stmts[ti] == nil {
			st, err := w.db.PrepareContext(ctx, insertSQL(w.dialect, t, rowsPerStatement(len(t.cols))))
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			w.stmts[ti] = st
		}
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for ti, t := range tables {
		args := c.rows[ti]
		n := len(t.cols)
		per := rowsPerStatement(n)
		for len(args) > 0 {
			k := min(per, len(args)/n)
			if k == per {
				_, err = tx.StmtContext(ctx, w.stmts[ti]).ExecContext(ctx, args[:k*n]...)
			} else {
				_, err = tx.ExecContext(ctx, insertSQL(w.dialect, t, k), args[:k*n]...)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			args = args[k*n:]
		}
	}
	return tx.Commit()
}

// copy loads a chunk with one COPY per table. COPY spares PostgreSQL the
// parsing and planning of each multi-row INSERT and the binding of its
// 30,000 parameters: the bulk load took about 50 of the 60 s of a 1M seed
// with INSERTs.
func (w *writer) copy(ctx context.Context, c *chunk) error {
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for ti, t := range tables {
		args, n := c.rows[ti], len(t.cols)
		rows := pgx.CopyFromSlice(len(args)/n, func(i int) ([]any, error) { return args[i*n : (i+1)*n], nil })
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, t.cols, rows); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return tx.Commit(ctx)
}
