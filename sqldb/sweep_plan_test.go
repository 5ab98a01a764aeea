package sqldb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// The bill sweeps read bills through bills_status_due, company by company,
// up to a due date: a plan that reads the whole bills table costs a second
// of CPU every run at a million bills.
func TestBillSweepsUseAnIndex(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		now := time.Date(2026, 12, 31, 23, 59, 0, 0, parcela.SaoPaulo)
		for _, companies := range [][]string{nil, {"c1", "c2"}} {
			for name, q := range sqldb.SweepQueries(db, parcela.Due{Now: now, Companies: companies, Limit: 100}) {
				plan := explain(t, context.Background(), db, q.SQL, q.Args)
				for _, l := range strings.Split(plan, "\n") {
					l = strings.TrimSpace(l)
					if l == "SCAN b" || strings.Contains(l, "Seq Scan on bills") || strings.Contains(l, "Seq Scan on payments") {
						t.Errorf("%s, companies %v: the sweep scans a table:\n%s", name, companies, plan)
					}
				}
				if db.Dialect() == sqldb.SQLite && !strings.Contains(plan, "INDEX bills_status_due ") {
					t.Errorf("%s, companies %v: the sweep does not read bills_status_due:\n%s", name, companies, plan)
				}
			}
		}
	})
}
