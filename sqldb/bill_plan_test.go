package sqldb_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// Every filter combination of GET /bills is served by an index: no plan
// reads the whole bills table. On PostgreSQL sequential scans are disabled
// for the check, so a plan shows a Seq Scan only when no index applies.
func TestBillListingUsesIndexes(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		a := parcela.Auth{CompanyID: "c", Environment: parcela.Sandbox}
		day := time.Date(2026, 12, 1, 0, 0, 0, 0, parcela.SaoPaulo)
		next := day.AddDate(0, 1, 0)
		dstDay := time.Date(2018, 12, 1, 0, 0, 0, 0, parcela.SaoPaulo)
		dstNext := dstDay.AddDate(0, 1, 0)
		filters := map[string]func(f *parcela.BillFilter){
			"billing_id": func(f *parcela.BillFilter) { f.BillingID = "b" },
			"order_id":   func(f *parcela.BillFilter) { f.OrderID = "o" },
			"status":     func(f *parcela.BillFilter) { f.Status = "pending" },
			"due":        func(f *parcela.BillFilter) { f.DueFrom, f.DueTo = &day, &next },
			"paid":       func(f *parcela.BillFilter) { f.PaidFrom, f.PaidTo = &day, &next },
			// Midnights of daylight saving time split the counts' days:
			// their parts are counted from the bills.
			"due_split": func(f *parcela.BillFilter) { f.DueFrom, f.DueTo = &dstDay, &dstNext },
		}
		names := []string{"billing_id", "order_id", "status", "due", "paid", "due_split"}
		for mask := 0; mask < 1<<len(names); mask++ {
			f := parcela.BillFilter{Page: parcela.Page{Page: 2, PerPage: 100}}
			var used []string
			for i, n := range names {
				if mask&(1<<i) != 0 {
					filters[n](&f)
					used = append(used, n)
				}
			}
			count, page, countArgs, args := sqldb.BillListQueries(db, a, f)
			for _, q := range []struct {
				sql  string
				args []any
			}{{count, countArgs}, {page, args}} {
				plan := explain(t, ctx, db, q.sql, q.args)
				if scansBills(db.Dialect(), plan) {
					t.Errorf("filters %v scan the bills table:\n%s\n%s", used, q.sql, plan)
				}
			}
		}
	})
}

// explain returns a statement's plan. On PostgreSQL it runs with sequential scans
// off, and with each of offs ("sort", say) off as well.
func explain(t *testing.T, ctx context.Context, db *sqldb.DB, q string, args []any, offs ...string) string {
	t.Helper()
	conn, err := db.SQLDB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	prefix := "EXPLAIN QUERY PLAN "
	if db.Dialect() == sqldb.Postgres {
		prefix = "EXPLAIN "
		for _, off := range append([]string{"seqscan"}, offs...) {
			if _, err := conn.ExecContext(ctx, "SET enable_"+off+" = off"); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if _, err := conn.ExecContext(ctx, "RESET enable_"+off); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	rows, err := conn.QueryContext(ctx, prefix+q, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", q, err)
	}
	defer rows.Close()
	return planText(t, rows)
}

// explainOverCopies is explain on PostgreSQL over temporary copies of
// tables (their columns, without constraints, and their indexes by the
// same names), each filled by its statements and analyzed, in one session:
// a plan that hangs on statistics the shared database's other rows move.
func explainOverCopies(t *testing.T, ctx context.Context, db *sqldb.DB, q string, args []any, tables map[string][]string) string {
	t.Helper()
	conn, err := db.SQLDB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var schema string
	if err := conn.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	for table, fill := range tables {
		rows, err := conn.QueryContext(ctx, "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2", schema, table)
		if err != nil {
			t.Fatal(err)
		}
		var indexes []string
		for rows.Next() {
			var def string
			if err := rows.Scan(&def); err != nil {
				t.Fatal(err)
			}
			indexes = append(indexes, strings.Replace(def, " ON "+schema+"."+table+" ", " ON pg_temp."+table+" ", 1))
		}
		if err := rows.Close(); err != nil || len(indexes) == 0 {
			t.Fatalf("the indexes of %s: %v", table, err)
		}
		exec("CREATE TEMP TABLE " + table + " AS SELECT * FROM " + schema + "." + table + " WITH NO DATA")
		defer exec("DROP TABLE pg_temp." + table)
		for _, def := range indexes {
			exec(def)
		}
		for _, f := range fill {
			exec(f)
		}
		exec("ANALYZE pg_temp." + table)
	}
	exec("SET enable_seqscan = off")
	defer exec("RESET enable_seqscan")
	rows, err := conn.QueryContext(ctx, "EXPLAIN "+sqldb.Rebind(db, q), args...)
	if err != nil {
		t.Fatalf("explain %s: %v", q, err)
	}
	defer rows.Close()
	return planText(t, rows)
}

// planText is an EXPLAIN's lines: each row's last column (SQLite: id,
// parent, notused, detail; PostgreSQL: one text column).
func planText(t *testing.T, rows *sql.Rows) string {
	t.Helper()
	cols, _ := rows.Columns()
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		switch v := vals[len(vals)-1].(type) {
		case string:
			lines = append(lines, v)
		case []byte:
			lines = append(lines, string(v))
		}
	}
	return strings.Join(lines, "\n")
}

func scansBills(d sqldb.Dialect, plan string) bool {
	// The page's bills are a subquery named b: reading its rows shows as
	// one "SCAN b" per CO-ROUTINE (or MATERIALIZE) b; another is the table.
	derived := 0
	for _, l := range strings.Split(plan, "\n") {
		l = strings.TrimSpace(l)
		if l == "CO-ROUTINE b" || l == "MATERIALIZE b" {
			derived++
		}
		if d == sqldb.SQLite && l == "SCAN b" {
			if derived--; derived < 0 {
				return true
			}
		}
		if d == sqldb.SQLite && (l == "SCAN bills" || l == "SCAN bill_day_counts" || l == "SCAN bill_count_deltas") {
			return true
		}
		if d == sqldb.Postgres && strings.Contains(l, "Seq Scan on bill") {
			return true
		}
	}
	return false
}

// The reads behind every order, charge and bill response use indexes.
func TestLookupsUseIndexes(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		for name, q := range sqldb.LookupQueries {
			args := []any{"x"}
			switch n := strings.Count(q, "?"); n {
			case 2:
				args = []any{"o", "x"}
			case 3:
				args = []any{"c", "sandbox", "x"}
			default:
				for len(args) < n {
					args = append(args, "x")
				}
			}
			plan := explain(t, context.Background(), db, sqldb.Rebind(db, q), args)
			for _, l := range strings.Split(plan, "\n") {
				l = strings.TrimSpace(l)
				if (strings.HasPrefix(l, "SCAN ") && !strings.Contains(l, "INDEX")) || strings.Contains(l, "Seq Scan") {
					t.Errorf("%s scans a table:\n%s", name, plan)
				}
			}
		}
	})
}

// The count of an offer's seats sold, which a PATCH giving the offer a
// seat limit runs inside its write transaction, reads that offer's orders
// by their index: through orders_owner it read every order of the company
// in the environment, holding SQLite's single writer (and every other
// company's writes) for a third of a second at 500,000 orders, at every
// such PATCH.
//
// PostgreSQL plans it by the statistics, which the package's other tests
// move in the database they share: with every order of other companies,
// orders_owner and orders_offer both promised one row for company c, and
// the planner took either. So there it is planned over copies of the two
// tables (temporary, shadowing them in the session), with their indexes,
// holding 2,000 of company c's orders of another offer, analyzed.
func TestSeatCountReadsTheOffersOrdersOnly(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		var plan string
		if db.Dialect() == sqldb.Postgres {
			plan = explainOverCopies(t, ctx, db, sqldb.SeatsSoldQuery, []any{"c", "sandbox", "o"}, map[string][]string{
				"orders": {`INSERT INTO orders (id, company_id, environment, offer_id, status, created_at)
					SELECT 'order-' || g, 'c', 'sandbox', 'another', 'pending', g FROM generate_series(1, 2000) g`},
				"billings": {`INSERT INTO billings (id, order_id) SELECT 'billing-' || g, 'order-' || g FROM generate_series(1, 2000) g`},
			})
		} else {
			plan = explain(t, ctx, db, sqldb.Rebind(db, sqldb.SeatsSoldQuery), []any{"c", "sandbox", "o"})
		}
		if !strings.Contains(plan, "orders_offer") || strings.Contains(plan, "orders_owner") {
			t.Errorf("the seats sold are counted over other orders than the offer's:\n%s", plan)
		}
	})
}

// A listing without a status (nor an order, billing or payment date) merges
// each status's run of bills_status_due: no plan sorts the company's bills
// before the page's LIMIT, since no index on the due date alone is kept.
func TestBillListingWithoutStatusMerges(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		a := parcela.Auth{CompanyID: "c", Environment: parcela.Sandbox}
		day := time.Date(2026, 12, 31, 0, 0, 0, 0, parcela.SaoPaulo)
		next := day.AddDate(0, 0, 1)
		for name, f := range map[string]parcela.BillFilter{
			"none": {Page: parcela.Page{Page: 3, PerPage: 100}},
			"due":  {Page: parcela.Page{Page: 1, PerPage: 100}, DueFrom: &day, DueTo: &next},
		} {
			_, page, _, args := sqldb.BillListQueries(db, a, f)
			// On PostgreSQL with sorts off: an empty test table makes a sort
			// the cheaper plan, so the check is that the indexes give the
			// order (at a million bills the planner picks the merge itself).
			plan := explain(t, ctx, db, page, args, "sort")
			if err := mergesBeforeLimit(db.Dialect(), plan); err != "" {
				t.Errorf("%s: %s:\n%s\n%s", name, err, page, plan)
			}
		}
	})
}

// mergesBeforeLimit says what is wrong with a no-status page's plan, or "".
func mergesBeforeLimit(d sqldb.Dialect, plan string) string {
	lines := strings.Split(plan, "\n")
	if d == sqldb.SQLite {
		// The derived bills b come first; "SCAN b" and the outer sort of
		// the page's hundred rows follow.
		merged := false
		for _, l := range lines {
			l = strings.TrimLeft(l, " |`-")
			switch {
			case l == "SCAN b":
				if !merged {
					return "no merge"
				}
				return ""
			case strings.HasPrefix(l, "MERGE (UNION ALL)"):
				merged = true
			case strings.Contains(l, "TEMP B-TREE"), strings.HasPrefix(l, "SCAN bills"):
				return "the bills are sorted or scanned"
			}
		}
		return "no derived page"
	}
	// PostgreSQL: below the page's Limit, a Merge Append of the arms' limited
	// index scans and no Sort node (the page's rows may be sorted above it).
	below := false
	merged := false
	for _, l := range lines {
		node := strings.TrimLeft(l, " ->")
		switch {
		case strings.HasPrefix(node, "Limit "):
			below = true
		case below && strings.HasPrefix(node, "Merge Append "):
			merged = true
		case below && (strings.HasPrefix(node, "Sort  (") || strings.HasPrefix(node, "Incremental Sort  (")):
			return "the bills are sorted before the limit"
		}
	}
	if !merged {
		return "no Merge Append below the limit"
	}
	return ""
}

// On SQLite each listing reads the index its filter names
// (sqliteBillIndex): an order's or a billing's bills bills_order; a
// payment date's bills_paid, unless a status and a due date bounded on both
// sides are named and the payment dates are not much narrower; every other
// filter bills_status_due alone, which holds every column the page reads
// (migration 00021), so a page is adjacent leaves of it rather than a
// table leaf per bill. SQLite plans without statistics: left to itself it
// took the index that holds every column for an order's bills too. A
// column added to bills and read by the listing, but not to the index,
// fails here as well.
func TestBillListingReadsTheNarrowestIndex(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		if db.Dialect() != sqldb.SQLite {
			t.Skip("PostgreSQL plans from its statistics")
		}
		ctx := context.Background()
		a := parcela.Auth{CompanyID: "c", Environment: parcela.Sandbox}
		day := time.Date(2026, 12, 31, 0, 0, 0, 0, parcela.SaoPaulo)
		next := day.AddDate(0, 1, 0)
		type listing struct {
			used []string
			f    parcela.BillFilter
			want string
		}
		var listings []listing
		// The sixth and seventh bits bound the payment date on one side
		// only; due and payment dates span a month each.
		for mask := 0; mask < 1<<7; mask++ {
			l := listing{f: parcela.BillFilter{Page: parcela.Page{Page: 2, PerPage: 100}}}
			f := &l.f
			for i, set := range []func(){
				func() { f.BillingID, l.used = "b", append(l.used, "billing_id") },
				func() { f.OrderID, l.used = "o", append(l.used, "order_id") },
				func() { f.Status, l.used = "paid", append(l.used, "status") },
				func() { f.DueFrom, f.DueTo, l.used = &day, &next, append(l.used, "due") },
				func() { f.PaidFrom, f.PaidTo, l.used = &day, &next, append(l.used, "paid") },
				func() { f.PaidFrom, f.PaidTo, l.used = &day, nil, append(l.used, "paid_from") },
				func() { f.PaidFrom, f.PaidTo, l.used = nil, &next, append(l.used, "paid_to") },
			} {
				if mask&(1<<i) != 0 {
					set()
				}
			}
			switch paid := f.PaidFrom != nil || f.PaidTo != nil; {
			case f.BillingID != "" || f.OrderID != "":
				l.want = "bills_order"
			case paid && (f.Status == "" || f.DueFrom == nil):
				l.want = "bills_paid"
			default:
				l.want = "bills_status_due"
			}
			listings = append(listings, l)
		}
		// A day's payments among two years of due dates: bills_paid.
		twoYears := day.AddDate(2, 0, 0)
		listings = append(listings, listing{
			used: []string{"status", "due over two years", "paid on a day"},
			f:    parcela.BillFilter{Page: parcela.Page{Page: 1, PerPage: 100}, Status: "paid", DueFrom: &day, DueTo: &twoYears, PaidFrom: &day, PaidTo: new(day.AddDate(0, 0, 1))},
			want: "bills_paid",
		})
		// Payment dates over decades among a month of due dates:
		// bills_status_due (eight times such a span overflowed a Duration
		// and chose bills_paid).
		for _, paid := range [][2]time.Time{
			{time.Date(2000, 1, 1, 0, 0, 0, 0, parcela.SaoPaulo), time.Date(2050, 1, 1, 0, 0, 0, 0, parcela.SaoPaulo)},
			{time.Date(1, 1, 1, 0, 0, 0, 0, parcela.SaoPaulo), time.Date(9999, 12, 31, 0, 0, 0, 0, parcela.SaoPaulo)},
		} {
			listings = append(listings, listing{
				used: []string{"status", "due over a month", "paid from " + paid[0].Format(time.DateOnly) + " to " + paid[1].Format(time.DateOnly)},
				f:    parcela.BillFilter{Page: parcela.Page{Page: 1, PerPage: 100}, Status: "paid", DueFrom: &day, DueTo: &next, PaidFrom: &paid[0], PaidTo: &paid[1]},
				want: "bills_status_due",
			})
		}
		for _, l := range listings {
			count, page, countArgs, args := sqldb.BillListQueries(db, a, l.f)
			plans := map[string]string{"page": explain(t, ctx, db, page, args)}
			// The narrow indexes may cover a count (bills_paid a payment
			// date's); bills_status_due must cover the page.
			want := []string{"USING COVERING INDEX " + l.want + " "}
			if l.want != "bills_status_due" {
				want = append(want, "USING INDEX "+l.want+" ")
			}
			if l.f.BillingID != "" || l.f.OrderID != "" || l.f.PaidFrom != nil || l.f.PaidTo != nil {
				plans["count"] = explain(t, ctx, db, count, countArgs)
			}
			for which, plan := range plans {
				reads := 0
				for _, line := range strings.Split(plan, "\n") {
					line = strings.TrimLeft(line, " |`-")
					if !strings.HasPrefix(line, "SEARCH b ") && !strings.HasPrefix(line, "SCAN b ") && line != "SCAN bills" {
						continue
					}
					if !slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(line, "SEARCH b "+w) }) {
						t.Errorf("filters %v: the %s reads bills otherwise than through %s: %q\n%s", l.used, which, l.want, line, plan)
					}
					reads++
				}
				if reads == 0 {
					t.Errorf("filters %v: no read of bills in the %s's plan:\n%s", l.used, which, plan)
				}
			}
		}
	})
}

// bills_status_due holds every column of bills, on both engines (after its
// key; PostgreSQL's as INCLUDE columns), so a listing's page reads that
// index alone (migration 00021). A column added to bills must be added to
// it.
func TestBillStatusDueHoldsEveryColumn(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		tableQ := `SELECT name FROM pragma_table_info('bills')`
		indexQ := `SELECT name FROM pragma_index_xinfo('bills_status_due') WHERE name IS NOT NULL`
		if db.Dialect() == sqldb.Postgres {
			tableQ = `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'bills'`
			indexQ = `SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
				JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
				WHERE c.relname = 'bills_status_due' AND c.relnamespace = current_schema()::regnamespace`
		}
		names := func(q string) []string {
			rows, err := db.SQLDB().QueryContext(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					t.Fatal(err)
				}
				out = append(out, n)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			slices.Sort(out)
			return out
		}
		table, index := names(tableQ), names(indexQ)
		if len(table) < 20 {
			t.Fatalf("bills has %d columns: %v", len(table), table)
		}
		if !slices.Equal(table, index) {
			t.Errorf("bills_status_due holds %v\nbills has %v", index, table)
		}
	})
}
