package sqldb_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// A listing's count sums the per-day counts over the whole days of its
// range and counts the bills of the days its bounds split. Bills due at the
// edges of days (São Paulo midnights with and without daylight saving time,
// the hour repeated when it ended, local mean time before 1914, instants
// before 1970, a down payment's millisecond, the last day of 9999), and
// every range between those instants, a millisecond either side of them and
// São Paulo midnights: each count equals the bills the range holds, while
// the triggers' changes are unfolded, after they are folded and after a
// recount.
func TestBillCountsAtTheEdgesOfDays(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 12, false)
		chargedOrder(t, r.app, r.a, financedOffer(t, r.app, r.a))
		bills, _, _, err := db.Bills(r.ctx, r.a, parcela.BillFilter{Page: parcela.Page{Page: 1, PerPage: 100}})
		if err != nil {
			t.Fatal(err)
		}
		sp := func(y int, m time.Month, d, h, min, s, ms int) time.Time {
			return time.Date(y, m, d, h, min, s, ms*1e6, parcela.SaoPaulo)
		}
		due := []time.Time{
			sp(2018, 11, 4, 0, 0, 0, 0), // daylight saving time began: 00:00 became 01:00 (-02)
			sp(2018, 12, 1, 0, 0, 0, 0), // a midnight at -02, 02:00 UTC
			time.Date(2018, 12, 1, 2, 59, 59, 999e6, time.UTC),
			time.Date(2018, 12, 1, 3, 0, 0, 0, time.UTC),
			time.Date(2019, 2, 17, 1, 30, 0, 0, time.UTC), // 23:30 -02, and the same 23:30 again at -03
			time.Date(2019, 2, 17, 2, 30, 0, 0, time.UTC),
			sp(1900, 1, 1, 0, 0, 0, 0), // local mean time, -03:06:28
			sp(1969, 12, 31, 0, 0, 0, 0),
			time.Date(1969, 12, 31, 12, 34, 56, 789e6, time.UTC),
			sp(2026, 11, 27, 11, 23, 45, 678), // downPayment, due at its charge
			sp(2026, 12, 31, 23, 59, 59, 999),
			sp(2027, 1, 1, 0, 0, 0, 0),
			sp(2027, 2, 28, 0, 0, 0, 0),
			sp(9999, 12, 31, 0, 0, 0, 0),
		}
		const downPayment = 9
		if len(bills) < len(due) {
			t.Fatalf("%d bills for %d due dates", len(bills), len(due))
		}
		// Each bill moves to its due date and status through the triggers;
		// the rest share the down payment's day, two of them its instant.
		type bill struct {
			due    time.Time
			status string
		}
		var held []bill
		for i, b := range bills {
			d := due[downPayment].Add(time.Duration((i-len(due))/2) * time.Millisecond)
			if i < len(due) {
				d = due[i]
			}
			s := parcela.BillStatuses[i%len(parcela.BillStatuses)]
			if _, err := db.SQLDB().ExecContext(r.ctx, sqldb.Rebind(db, `UPDATE bills SET due_date = ?, status = ? WHERE id = ?`), d.UnixMilli(), s, b.ID); err != nil {
				t.Fatal(err)
			}
			held = append(held, bill{d, s})
		}
		for _, d := range due {
			if !slices.ContainsFunc(held, func(b bill) bool { return b.due.Equal(d) }) {
				t.Fatalf("no bill is due at %s", d)
			}
		}
		bounds := []*time.Time{nil}
		for _, d := range due {
			for _, b := range []time.Time{d, d.Add(-time.Millisecond), d.Add(time.Millisecond)} {
				bounds = append(bounds, &b)
			}
			y, m, day := d.In(parcela.SaoPaulo).Date()
			for _, b := range []time.Time{time.Date(y, m, day, 0, 0, 0, 0, parcela.SaoPaulo), time.Date(y, m, day+1, 0, 0, 0, 0, parcela.SaoPaulo)} {
				bounds = append(bounds, &b)
			}
		}
		check := func(step string) {
			t.Helper()
			wrong := 0
			for _, status := range []string{"", parcela.BillPaid} {
				for _, from := range bounds {
					for _, to := range bounds {
						want := 0
						for _, b := range held {
							if (status == "" || b.status == status) && (from == nil || !b.due.Before(*from)) && (to == nil || b.due.Before(*to)) {
								want++
							}
						}
						f := parcela.BillFilter{Page: parcela.Page{Page: 1, PerPage: 100}, Status: status, DueFrom: from, DueTo: to}
						page, total, _, err := db.Bills(r.ctx, r.a, f)
						if err != nil {
							t.Fatal(err)
						}
						if total != want || len(page) != want {
							if wrong++; wrong <= 10 {
								t.Errorf("%s: status %q from %s to %s: total_items %d and %d bills, want %d", step, status, showTime(from), showTime(to), total, len(page), want)
							}
						}
					}
				}
			}
			if wrong > 10 {
				t.Errorf("%s: %d wrong counts in all", step, wrong)
			}
		}
		check("changed")
		if _, err := db.CompactBillCounts(r.ctx); err != nil {
			t.Fatal(err)
		}
		check("folded")
		if err := db.RecountBills(r.ctx); err != nil {
			t.Fatal(err)
		}
		check("recounted")
	})
}

func showTime(t *time.Time) string {
	if t == nil {
		return "(none)"
	}
	return fmt.Sprintf("%s (%d ms)", t.UTC().Format("2006-01-02T15:04:05.000Z"), t.UnixMilli())
}

// The parts of days a count's bounds split are read from bills_status_due
// by status and due date: no plan reads a company's bills to filter them
// by status or due date after. A daylight-saving midnight splits both
// ends; without a status each end is each status's run.
func TestBillCountsReadSplitDaysByTheirKey(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		a := parcela.Auth{CompanyID: "c", Environment: parcela.Sandbox}
		day := time.Date(2018, 12, 1, 0, 0, 0, 0, parcela.SaoPaulo)
		next := day.AddDate(0, 1, 0)
		for status, want := range map[string]int{"": 2 * len(parcela.BillStatuses), parcela.BillPaid: 2} {
			count, _, args, _ := sqldb.BillListQueries(db, a, parcela.BillFilter{Page: parcela.Page{Page: 1, PerPage: 100}, Status: status, DueFrom: &day, DueTo: &next})
			plan := explain(t, ctx, db, count, args)
			reads := 0
			for _, line := range strings.Split(plan, "\n") {
				line = strings.TrimSpace(line)
				switch {
				case db.Dialect() == sqldb.SQLite && strings.HasPrefix(line, "SEARCH b "):
					reads++
					if !strings.HasSuffix(line, "(company_id=? AND environment=? AND status=? AND due_date>? AND due_date<?)") {
						t.Errorf("status %q: %q does not search by status and due date:\n%s", status, line, plan)
					}
				case db.Dialect() == sqldb.Postgres && strings.Contains(line, " on bills b"):
					reads++
				case db.Dialect() == sqldb.Postgres && strings.HasPrefix(line, "Filter:"):
					t.Errorf("status %q: a read filters after the index: %q\n%s", status, line, plan)
				case db.Dialect() == sqldb.Postgres && strings.HasPrefix(line, "Index Cond:") && strings.Contains(line, "due_date"):
					if !strings.Contains(line, "(status = ") {
						t.Errorf("status %q: %q does not search by status:\n%s", status, line, plan)
					}
				}
			}
			if reads != want {
				t.Errorf("status %q: %d reads of bills, want %d:\n%s", status, reads, want, plan)
			}
		}
	})
}
