package sqldb_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A batch taken in turns between companies reads each company's due rows
// through the sweeps' indexes: one company with a backlog of more than a
// batch of installments to issue and expired payments, 40 others with a
// history of 20,000 paid bills and payments. No plan needs to read a whole
// table, and the other company's due rows are in the first batch. (Larger
// seeds, run by hand, are in docs/design.md, "Sweeps".)
func TestSweepTurnsAtSize(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 41,000 rows")
	}
	t.Parallel()
	const backlog, history, others = 600, 20_000, 40
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			big, few := r.company("Escola Grande "+sqldbtest.Suffix()), r.company("Escola Pequena "+sqldbtest.Suffix())
			installment := r.activeBilling(big, 2).Bills[1]
			offer, o := r.pendingOrder(big)
			o, err := r.charge(big, offer, o, parcela.MethodBoleto, 2)
			if err != nil {
				t.Fatal(err)
			}
			payment := o.Billings[0].Bills[0].Payments[0]
			r.clock.Advance(24 * time.Hour)
			fewBill := r.activeBilling(few, 2).Bills[1]

			// The backlog is due a minute apart before the other company's
			// bill, the history paid.
			copies := func(table, id string, from, n int, set map[string]string) {
				t.Helper()
				r.copyRows(table, id, from, n, set)
			}
			copies("bills", installment.ID, 1, backlog, map[string]string{"due_date": "due_date - n.i * 60000",
				"effective_due_date": "effective_due_date - n.i * 60000"})
			// ith is a copy's column: col numbered as the copy is (copies'
			// ids are id-i).
			ith := func(col string) string { return col + " || '-' || CAST(n.i AS TEXT)" }
			copies("companies", big.CompanyID, 1, others, map[string]string{"slug": ith("slug")})
			// Each other company's history is of its own copy of the
			// installment's offer, order and billing, as a sale's rows are.
			var offerID string
			if err := r.db.SQLDB().QueryRowContext(r.ctx, sqldb.Rebind(r.db, `SELECT offer_id FROM orders WHERE id = ?`), installment.OrderID).Scan(&offerID); err != nil {
				t.Fatal(err)
			}
			copies("offers", offerID, 1, others, map[string]string{"company_id": ith("company_id")})
			copies("orders", installment.OrderID, 1, others, map[string]string{"company_id": ith("company_id"), "offer_id": ith("offer_id")})
			copies("billings", installment.BillingID, 1, others, map[string]string{"company_id": ith("company_id"), "order_id": ith("order_id")})
			nth := func(col string) string {
				return col + " || '-' || CAST(1 + n.i % " + strconv.Itoa(others) + " AS TEXT)"
			}
			copies("bills", installment.ID, backlog+1, history, map[string]string{"company_id": nth("company_id"), "billing_id": nth("billing_id"),
				"order_id": nth("order_id"), "status": "'paid'", "paid_at": "due_date"})
			copies("payments", payment.ID, 1, backlog, map[string]string{"nosso_numero": "NULL", "expires_at": "expires_at - n.i * 60000"})
			// Each paid history payment is of the history bill of its number.
			copies("payments", payment.ID, backlog+1, history, map[string]string{"company_id": nth("company_id"), "nosso_numero": "NULL", "status": "'paid'",
				"paid_at": "expires_at", "bill_id": ith("'" + installment.ID + "'")})
			if e == sqldb.Postgres {
				if _, err := r.db.SQLDB().ExecContext(r.ctx, `ANALYZE`); err != nil {
					t.Fatal(err)
				}
			}

			now := fewBill.DueDate.Add(60 * 24 * time.Hour)
			d := parcela.Due{Now: now, Companies: []string{big.CompanyID, few.CompanyID}, Limit: 500}
			// Planned as the sweeps run: over every company. PostgreSQL's own
			// choice is logged; the check is that an index serves each
			// selection (sequential scans off): a costlier choice of a scan
			// over a large share of a table is the planner's, numbering the
			// turns does not force it.
			for name, q := range sqldb.AllSweepQueries(r.db, parcela.Due{Now: now, Limit: 500}) {
				t.Logf("%s, as planned:\n%s", name, planOf(t, r.db, q))
				plan := explain(t, r.ctx, r.db, q.SQL, q.Args)
				for _, l := range strings.Split(plan, "\n") {
					l = strings.TrimSpace(l)
					if strings.Contains(l, "Seq Scan on bills") || strings.Contains(l, "Seq Scan on payments") ||
						l == "SCAN b" || l == "SCAN p" || l == "SCAN bills" || l == "SCAN payments" {
						t.Errorf("%s reads a whole table:\n%s", name, plan)
					}
				}
			}
			began := time.Now()
			rows, err := r.db.InstallmentsToIssue(r.ctx, d)
			t.Logf("installments to issue: %d rows in %v", len(rows), time.Since(began))
			if err != nil || len(rows) != 500 || !holds(rows, fewBill.ID) {
				t.Fatalf("%d rows, the other company's bill in them: %v (%v)", len(rows), holds(rows, fewBill.ID), err)
			}
			began = time.Now()
			rows, err = r.db.ExpiredPayments(r.ctx, d)
			t.Logf("expired payments: %d rows in %v", len(rows), time.Since(began))
			if err != nil || len(rows) != 500 {
				t.Fatalf("%d rows: %v", len(rows), err)
			}
		})
	}
}

func holds(rows []parcela.DueRow, id string) bool {
	for _, row := range rows {
		if row.ID == id {
			return true
		}
	}
	return false
}

// copyRows inserts n copies of table's row id, numbered from from: each
// with the id id-i, and the columns of set as their expressions (over the
// row's columns and n.i).
func (r *lifecycleRig) copyRows(table, id string, from, n int, set map[string]string) {
	r.t.Helper()
	rows, err := r.db.SQLDB().QueryContext(r.ctx, `SELECT * FROM `+table+` WHERE 1 = 0`)
	if err != nil {
		r.t.Fatal(err)
	}
	cols, err := rows.Columns()
	rows.Close()
	if err != nil {
		r.t.Fatal(err)
	}
	exprs := make([]string, len(cols))
	for i, c := range cols {
		switch e, ok := set[c]; {
		case c == "id":
			exprs[i] = `id || '-' || CAST(n.i AS TEXT)`
		case ok:
			exprs[i] = e
		default:
			exprs[i] = c
		}
	}
	q := `WITH RECURSIVE n(i) AS (SELECT ` + strconv.Itoa(from) + ` UNION ALL SELECT i + 1 FROM n WHERE i < ` + strconv.Itoa(from+n-1) + `)
		INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) SELECT ` + strings.Join(exprs, ", ") + ` FROM ` + table + ` CROSS JOIN n WHERE id = ?`
	if _, err := r.db.SQLDB().ExecContext(r.ctx, sqldb.Rebind(r.db, q), id); err != nil {
		r.t.Fatalf("copy %s: %v", table, err)
	}
}

// planOf is a statement's plan as the engine would run it (sequential
// scans allowed); on PostgreSQL, run, with its times.
func planOf(t *testing.T, db *sqldb.DB, q sqldb.Query) string {
	t.Helper()
	prefix := "EXPLAIN QUERY PLAN "
	if db.Dialect() == sqldb.Postgres {
		prefix = "EXPLAIN (ANALYZE, COSTS OFF) "
	}
	rows, err := db.SQLDB().QueryContext(context.Background(), prefix+q.SQL, q.Args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer rows.Close()
	return planText(t, rows)
}
