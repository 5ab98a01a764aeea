package sqldb_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// catalogFixture is a company with an address, a product and an offer
// with a configuration, and another company with its own, whose rows give
// each of the first's references somewhere else to point.
type catalogFixture struct {
	company, address, product, offer, configuration string
	kind, shift, city, state                        string
	other                                           struct{ company, address, product, offer string }
}

func newCatalogFixture(t *testing.T, db *sqldb.DB) catalogFixture {
	t.Helper()
	ctx := context.Background()
	app := sqldbtest.Services(db, nil)
	var f catalogFixture
	for i, city := range []string{"3304557", "3550308"} {
		c := parcela.NewCompany("Escola "+sqldbtest.Suffix(), "11222333000181", "catalogo-"+sqldbtest.Suffix())
		zipcode := map[string]string{"3304557": "20040002", "3550308": "01310100"}[city] // each in its city's state
		c.Address = &parcela.Address{Zipcode: zipcode, Street: "Rua da Assembleia", Number: "10", Neighborhood: "Centro",
			City: parcela.City{IBGECode: city}}
		if err := db.CreateCompany(ctx, &c); err != nil {
			t.Fatal(err)
		}
		a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
		p, err := app.Catalog.CreateProduct(ctx, a, fromJSON[parcela.ProductInput](t, `{"name": "Curso", "full_amount_cents": 150000, "kind": "course"}`))
		if err != nil {
			t.Fatal(err)
		}
		o, err := app.Catalog.CreateOffer(ctx, a, fromJSON[parcela.OfferRequest](t, `{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000, "seats": 10},
			"payment_configurations": [{"payment_type": "upfront", "payment_methods": ["pix", "boleto"], "expires_in_hours": 48}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			f.company, f.address, f.product, f.offer, f.configuration = c.ID, c.Address.ID, p.ID, o.ID, o.PaymentConfigurations[0].ID
			f.kind, f.shift, f.city, f.state = p.Kind.ID, p.Shift.ID, c.Address.City.ID, c.Address.City.State.ID
		} else {
			f.other.company, f.other.address, f.other.product, f.other.offer = c.ID, c.Address.ID, p.ID, o.ID
		}
	}
	return f
}

// Every column of every row an offer's wide read returns moves its
// company's catalog version when it changes, but an offer's sold seats
// (seats_taken, and SQLite's sold);
// a column added later without its trigger fails here. Each change is
// made by hand, as another process or an operator would, and rolled back.
func TestCatalogVersionMovesWithEveryColumn(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db := sqldbtest.Open(t, e, sqldb.Config{Enqueuer: quietEnqueuer{}})
			f := newCatalogFixture(t, db)
			another := func(table, id string) string {
				var other string
				if err := db.SQLDB().QueryRow(sqldb.Rebind(db, `SELECT id FROM `+table+` WHERE id <> ? ORDER BY id LIMIT 1`), id).Scan(&other); err != nil {
					t.Fatal(err)
				}
				return quote(other)
			}
			tables := []struct {
				table, id string
				others    map[string]string // a column's other value, as SQL: the references' another row they may name
			}{
				{"companies", f.company, map[string]string{"address_id": quote(f.other.address)}},
				{"addresses", f.address, map[string]string{"city_id": another("cities", f.city)}},
				{"products", f.product, map[string]string{"company_id": quote(f.other.company), "kind_id": another("kinds", f.kind), "shift_id": another("shifts", f.shift)}},
				{"offers", f.offer, map[string]string{"company_id": quote(f.other.company), "product_id": quote(f.other.product)}},
				{"payment_configurations", f.configuration, map[string]string{"offer_id": quote(f.other.offer)}},
				{"kinds", f.kind, nil},
				{"shifts", f.shift, nil},
				{"cities", f.city, map[string]string{"state_id": another("states", f.state)}},
				{"states", f.state, map[string]string{"ibge_code": "99"}}, // no state's code
			}
			for _, tb := range tables {
				for _, col := range columnsOf(t, db, tb.table) {
					if col.name == "id" || (tb.table == "companies" && col.name == "catalog_version") {
						continue // keys never change (their references hold them); the version is what moves
					}
					set := col.changed()
					if ref, ok := tb.others[col.name]; ok {
						set = ref
					} else if strings.HasSuffix(col.name, "_id") {
						t.Fatalf("%s.%s: a reference without another row to name", tb.table, col.name)
					} else if set == "" {
						t.Fatalf("%s.%s: no change written for its type %s", tb.table, col.name, col.kind)
					}
					before, after := versionAcross(t, db, f.company, sqldb.Rebind(db, `UPDATE `+tb.table+` SET `+col.name+` = `+set+` WHERE id = ?`), tb.id)
					// An offer's seats sold (and, on SQLite, its sales) are read
					// apart: a sale moves no catalog.
					wantMoved := !(tb.table == "offers" && (col.name == "seats_taken" || col.name == "sold"))
					if moved := after != before; moved != wantMoved {
						t.Errorf("%s.%s changed: version %d → %d, want moved %v", tb.table, col.name, before, after, wantMoved)
					}
				}
			}
			// A customer's address is no company's: its change moves nothing.
			customer := parcela.NewID()
			if _, err := db.SQLDB().Exec(sqldb.Rebind(db, `INSERT INTO addresses (id, zipcode, street, number, neighborhood, city_id, created_at, updated_at)
				VALUES (?, '01310100', 'Avenida Paulista', '1000', 'Bela Vista', ?, 0, 0)`), customer, f.city); err != nil {
				t.Fatal(err)
			}
			if before, after := versionAcross(t, db, f.company, sqldb.Rebind(db, `UPDATE addresses SET street = 'Rua Augusta' WHERE id = ?`), customer); before != after {
				t.Errorf("a customer's address moved the company's version %d → %d", before, after)
			}
			// A row removed; the version set back by hand.
			for q, id := range map[string]string{`DELETE FROM payment_configurations WHERE id = ?`: f.configuration,
				`UPDATE companies SET catalog_version = 0 WHERE id = ?`: f.company} {
				if before, after := versionAcross(t, db, f.company, sqldb.Rebind(db, q), id); after <= before {
					t.Errorf("%s: version %d → %d, want it grown", q, before, after)
				}
			}
		})
	}
}

func quote(id string) string { return "'" + id + "'" }

type column struct{ name, kind string }

// changed is an expression giving the column another value of its type.
func (c column) changed() string {
	switch strings.ToLower(c.kind) {
	case "text", "character varying":
		return "COALESCE(" + c.name + ", '') || 'x'"
	case "integer", "bigint":
		return "COALESCE(" + c.name + ", 0) + 1"
	case "boolean":
		return "NOT COALESCE(" + c.name + ", FALSE)"
	}
	return ""
}

func columnsOf(t *testing.T, db *sqldb.DB, table string) []column {
	t.Helper()
	q := `SELECT name, type FROM pragma_table_info(?)`
	if db.Dialect() == sqldb.Postgres {
		q = `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`
	}
	rows, err := db.SQLDB().Query(q, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.kind); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil || len(out) == 0 {
		t.Fatalf("columns of %s: %d, %v", table, len(out), err)
	}
	return out
}

// versionAcross runs q with id in a transaction it rolls back, and returns
// the company's catalog version before and after q in it.
func versionAcross(t *testing.T, db *sqldb.DB, company, q, id string) (before, after int64) {
	t.Helper()
	tx, err := db.SQLDB().Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	version := sqldb.Rebind(db, `SELECT catalog_version FROM companies WHERE id = ?`)
	if err := tx.QueryRow(version, company).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(q, id); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if err := tx.QueryRow(version, company).Scan(&after); err != nil {
		t.Fatal(err)
	}
	return before, after
}

// eachTwoHandles runs fn on every engine, in parallel, with a checkout
// bundle on one handle of a database and another handle of it, as two
// processes or instances would have: each keeps its own offers.
func eachTwoHandles(t *testing.T, fn func(t *testing.T, b *checkoutBundle, other *sqldb.DB)) {
	t.Helper()
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			dsn := sqldbtest.DSN(t, e)
			var dbs [2]*sqldb.DB
			for i := range dbs {
				db, err := sqldb.Open(context.Background(), dsn, sqldb.Config{Enqueuer: quietEnqueuer{}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				dbs[i] = db
			}
			fn(t, checkoutSetup(t, dbs[0]), dbs[1])
		})
	}
}

// A kept offer is what the wide read returns, after changes made through
// another handle (another process or instance: its own cache) and by
// hand, and with the seats its sales took.
func TestKeptOfferIsWhatTheWideReadReturns(t *testing.T) {
	eachTwoHandles(t, func(t *testing.T, b *checkoutBundle, other *sqldb.DB) {
		db := b.db
		ob := &checkoutBundle{t: t, ctx: b.ctx, db: other, clock: b.clock, app: sqldbtest.Services(other, b.clock), a: b.a, c: b.c, offer: b.offer}
		ctx := b.ctx
		order := b.charge(3, parcela.MethodPix)
		check := func(step string) {
			t.Helper()
			want, err := sqldb.WideOffer(other, b.a, b.offer.ID)
			if err != nil {
				t.Fatal(err)
			}
			reads := map[string]func() (*parcela.Offer, error){
				"public": func() (*parcela.Offer, error) { return db.PublicOffer(ctx, parcela.Sandbox, b.c.Slug, b.offer.ID) },
				"owner":  func() (*parcela.Offer, error) { return db.Offer(ctx, b.a, b.offer.ID) },
				"order": func() (*parcela.Offer, error) {
					o, err := db.Order(ctx, b.a, order.ID)
					if err != nil {
						return nil, err
					}
					return o.Offer, nil
				},
			}
			for name, read := range reads {
				for range 2 { // the second from the cache
					got, err := read()
					if err != nil {
						t.Fatalf("%s: %s read: %v", step, name, err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s: %s read\n%+v\nwant\n%+v", step, name, got, want)
					}
					got.Name, got.Product.Company.Name = "changed by a caller", "changed by a caller"
					got.PaymentConfigurations[0].PaymentMethods[0] = "changed by a caller"
				}
			}
			// The checkout: the offer without its configurations, and
			// its billing's.
			bill := order.Billings[0].Bills[0]
			wantConfig := want.PaymentConfigurations[slices.IndexFunc(want.PaymentConfigurations, func(pc *parcela.PaymentConfiguration) bool {
				return pc.ID == order.Billings[0].PaymentConfigurationID
			})]
			want.PaymentConfigurations = nil
			for range 2 {
				read, got, err := db.PayerBill(ctx, parcela.Sandbox, bill.ID, func(parcela.PayerKey) bool { return true })
				if err != nil {
					t.Fatalf("%s: checkout read: %v", step, err)
				}
				if pc := read.Billing.PaymentConfiguration; !reflect.DeepEqual(got, want) || !reflect.DeepEqual(pc, wantConfig) {
					t.Fatalf("%s: checkout read\n%+v\n%+v\nwant\n%+v\n%+v", step, got, pc, want, wantConfig)
				}
			}
		}
		check("first reads")
		if _, err := ob.app.Catalog.UpdateOffer(ctx, b.a, b.offer.ID, fromJSON[parcela.OfferFields](t, `{"name": "Turma de março", "seats": 50}`)); err != nil {
			t.Fatal(err)
		}
		check("the offer updated elsewhere")
		if _, err := ob.app.Catalog.UpdateProduct(ctx, b.a, b.offer.ProductID, fromJSON[parcela.ProductInput](t, `{"name": "Curso de verão", "full_amount_cents": 150000, "kind": "course"}`)); err != nil {
			t.Fatal(err)
		}
		check("the product updated elsewhere")
		ob.charge(1, parcela.MethodPix) // a seat taken elsewhere
		check("a seat sold elsewhere")
		for _, q := range []string{
			`UPDATE payment_configurations SET interest_rate = '0.0249' WHERE offer_id = ? AND payment_type = 'financed'`,
			`UPDATE companies SET max_installments = 6 WHERE id = (SELECT company_id FROM offers WHERE id = ?)`,
			`UPDATE offers SET amount_cents = 99000 WHERE id = ?`,
		} {
			if _, err := other.SQLDB().Exec(sqldb.Rebind(other, q), b.offer.ID); err != nil {
				t.Fatal(err)
			}
			check(q)
		}
		b.clock.Advance(time.Hour)
		if _, err := ob.app.Catalog.UpdateOffer(ctx, b.a, b.offer.ID, fromJSON[parcela.OfferFields](t, `{"availability": "disabled"}`)); err != nil {
			t.Fatal(err)
		}
		check("the offer disabled elsewhere")
	})
}

// A clone shares no pointer, slice or map with the kept offer: every
// pointer and slice of an offer filled to its leaves is another in the
// clone. Rates and times are values whose insides no caller changes.
func TestCloneOfferSharesNothing(t *testing.T) {
	var o parcela.Offer
	fill(reflect.ValueOf(&o).Elem())
	c := sqldb.CloneOffer(&o)
	if !reflect.DeepEqual(c, &o) {
		t.Fatalf("clone\n%+v\nwant\n%+v", c, o)
	}
	shared(t, reflect.ValueOf(&o).Elem(), reflect.ValueOf(c).Elem(), "offer")
}

var opaque = map[reflect.Type]bool{reflect.TypeFor[parcela.Rate](): true, reflect.TypeFor[time.Time](): true}

// fill makes every pointer of v point somewhere and every slice hold one
// element, to the leaves.
func fill(v reflect.Value) {
	if opaque[v.Type()] {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.String:
		v.SetString("x")
	}
}

func shared(t *testing.T, a, b reflect.Value, path string) {
	t.Helper()
	if opaque[a.Type()] {
		return
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if a.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s is shared with the kept offer", path)
		}
		switch a.Kind() {
		case reflect.Pointer:
			shared(t, a.Elem(), b.Elem(), path)
		case reflect.Slice:
			for i := range a.Len() {
				shared(t, a.Index(i), b.Index(i), path+"[]")
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				shared(t, a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)
			}
		}
	}
}

// Readers filling the cache while another handle changes the offer never
// keep an older copy over a newer one: once a change has committed, the
// next read shows it, and no read shows a name never written.
func TestKeptOfferRacingChanges(t *testing.T) {
	eachTwoHandles(t, func(t *testing.T, b *checkoutBundle, other *sqldb.DB) {
		db := b.db
		writer := sqldbtest.Services(other, b.clock)
		var written sync.Map // every name committed or about to be
		written.Store(b.offer.Name, true)
		stop := make(chan struct{})
		var readers sync.WaitGroup
		for range 4 {
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					o, err := db.PublicOffer(b.ctx, parcela.Sandbox, b.c.Slug, b.offer.ID)
					if err != nil {
						t.Error(err)
						return
					}
					if _, ok := written.Load(o.Name); !ok {
						t.Errorf("read the name %q, never written", o.Name)
						return
					}
				}
			})
		}
		for i := range 25 {
			name := fmt.Sprintf("Turma %d", i)
			written.Store(name, true)
			if _, err := writer.Catalog.UpdateOffer(b.ctx, b.a, b.offer.ID, parcela.OfferFields{Name: &name}); err != nil {
				t.Fatal(err)
			}
			o, err := db.PublicOffer(b.ctx, parcela.Sandbox, b.c.Slug, b.offer.ID)
			if err != nil {
				t.Fatal(err)
			}
			if o.Name != name {
				t.Fatalf("after the change to %q committed, a read showed %q", name, o.Name)
			}
		}
		close(stop)
		readers.Wait()
	})
}
