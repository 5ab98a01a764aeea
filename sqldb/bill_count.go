package sqldb

import (
	"context"
	"slices"
	"strings"

	"parcela"
)

// countQuery counts the bills a listing's filter matches. Filters on status
// and due dates are answered from the per-day counts (migration 00022),
// whose cost is the days in the range, not the bills; the parts of a day at
// either end of the range that the counts cannot split are counted from the
// bills (countDays). The other filters select few bills (a billing's, an
// order's) or none of the counts' keys (paid_at), and count the bills
// themselves.
func (l listing) countQuery() (string, []any) {
	if l.countBills {
		return `SELECT COUNT(*) FROM ` + l.bills + ` WHERE ` + l.where(), l.args
	}
	days, edges := countDays(l.dueFrom, l.dueTo)
	var terms []string
	var args []any
	if days != nil {
		cond := slices.Clone(l.countCond)
		dayArgs := slices.Clone(l.countArgs)
		if days[0] != nil {
			cond, dayArgs = append(cond, "due_day >= ?"), append(dayArgs, *days[0])
		}
		if days[1] != nil {
			cond, dayArgs = append(cond, "due_day < ?"), append(dayArgs, *days[1])
		}
		where := strings.Join(cond, " AND ")
		terms = append(terms, `(SELECT COALESCE(SUM(n), 0) FROM (
			SELECT bills AS n FROM bill_day_counts WHERE `+where+`
			UNION ALL
			SELECT delta AS n FROM bill_count_deltas WHERE `+where+`) counts)`)
		args = append(append(args, dayArgs...), dayArgs...)
	}
	// Without a status, each status's run of bills_status_due is counted
	// on its own: PostgreSQL may otherwise read the company's whole index
	// for the status it filters after (as the page does, pageBills).
	statuses := []any{nil}
	if l.byStatus {
		statuses = make([]any, len(parcela.BillStatuses))
		for i, s := range parcela.BillStatuses {
			statuses[i] = s
		}
	}
	for _, e := range edges {
		for _, s := range statuses {
			keys, keyArgs := `b.`+strings.Join(l.countCond, ` AND b.`), l.countArgs
			if s != nil {
				keys, keyArgs = keys+` AND b.status = ?`, append(slices.Clone(keyArgs), s)
			}
			terms = append(terms, `(SELECT COUNT(*) FROM `+l.bills+` WHERE `+keys+` AND b.due_date >= ? AND b.due_date < ?)`)
			args = append(append(args, keyArgs...), e[0], e[1])
		}
	}
	if len(terms) == 0 { // an empty range
		return `SELECT 0`, nil
	}
	return `SELECT ` + strings.Join(terms, " + "), args
}

// dayMS is a day of the per-day counts, which begin at São Paulo's midnight
// without daylight saving time (03:00 UTC): every São Paulo midnight since
// 2019, when Brazil last dropped daylight saving time. A bound elsewhere (an
// earlier midnight of daylight saving time, any instant of the store's
// filters) splits its day: that part is counted from the bills.
const (
	dayMS       = 24 * 3600 * 1000
	dayStartsMS = 3 * 3600 * 1000
)

// dueDay is the day of the per-day counts that holds the instant ms. The
// migration's triggers compute the same, in SQL, with the same truncating
// remainder (dueDaySQL).
func dueDay(ms int64) int64 { return ms - ((ms-dayStartsMS)%dayMS+dayMS)%dayMS }

// dueDaySQL is dueDay of bills' due_date, as migration 00022's triggers
// write it.
const dueDaySQL = `due_date - ((due_date - 10800000) % 86400000 + 86400000) % 86400000`

// countDays splits the due dates [from, to) (nil: unbounded) into the whole
// days the counts answer, [days[0], days[1]), and the parts of a day at
// either end, each [start, end), that only the bills answer. days is nil
// when no whole day lies in the range.
func countDays(from, to *int64) (days *[2]*int64, edges [][2]int64) {
	var lo, hi *int64
	if from != nil {
		if lo = new(dueDay(*from)); *lo < *from {
			*lo += dayMS
		}
	}
	if to != nil {
		hi = new(dueDay(*to))
	}
	if lo != nil && hi != nil && *lo >= *hi {
		if *from < *to {
			edges = append(edges, [2]int64{*from, *to})
		}
		return nil, edges
	}
	if lo != nil && *from < *lo {
		edges = append(edges, [2]int64{*from, *lo})
	}
	if hi != nil && *hi < *to {
		edges = append(edges, [2]int64{*hi, *to})
	}
	return &[2]*int64{lo, hi}, edges
}

// CompactBillCounts folds the count deltas written since the last run into
// the per-day counts, and drops days whose count fell to zero. It returns
// how many deltas it folded. A count reads both tables in one statement, so
// it is exact before, during and after a compaction.
func (db *DB) CompactBillCounts(ctx context.Context) (int, error) {
	// Most seconds there is nothing to fold: check on a reader, so that an
	// idle compactor neither waits for SQLite's writer nor writes a page.
	var pending bool
	if err := db.reader.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bill_count_deltas)`).Scan(&pending); err != nil || !pending {
		return 0, failed("look for bill count deltas", err)
	}
	var n int
	err := db.inTx(ctx, func(tx *Tx) error {
		var folded int64
		if db.dialect == Postgres {
			// One statement: it folds exactly the deltas it deletes, while
			// other transactions keep appending.
			res, err := tx.r.exec(ctx, `WITH moved AS (DELETE FROM bill_count_deltas RETURNING company_id, environment, status, due_day, delta)
				INSERT INTO bill_day_counts (company_id, environment, status, due_day, bills)
				SELECT company_id, environment, status, due_day, SUM(delta) FROM moved GROUP BY company_id, environment, status, due_day
				ON CONFLICT (company_id, environment, status, due_day) DO UPDATE SET bills = bill_day_counts.bills + excluded.bills`)
			if err != nil {
				return err
			}
			if folded, err = res.RowsAffected(); err != nil {
				return err
			}
		} else {
			// SQLite has one writer: nothing is appended between the two.
			if _, err := tx.r.exec(ctx, `INSERT INTO bill_day_counts (company_id, environment, status, due_day, bills)
				SELECT company_id, environment, status, due_day, SUM(delta) FROM bill_count_deltas WHERE true
				GROUP BY company_id, environment, status, due_day
				ON CONFLICT (company_id, environment, status, due_day) DO UPDATE SET bills = bill_day_counts.bills + excluded.bills`); err != nil {
				return err
			}
			res, err := tx.r.exec(ctx, `DELETE FROM bill_count_deltas`)
			if err != nil {
				return err
			}
			if folded, err = res.RowsAffected(); err != nil {
				return err
			}
		}
		n = int(folded)
		if n == 0 {
			return nil
		}
		_, err := tx.r.exec(ctx, `DELETE FROM bill_day_counts WHERE bills = 0`)
		return err
	})
	return n, failed("compact bill counts", err)
}

// RecountBills rebuilds the per-day counts from the bills themselves, for a
// bulk load that ran without the count triggers, or a repair.
func (db *DB) RecountBills(ctx context.Context) error {
	return failed("recount bills", db.inTx(ctx, func(tx *Tx) error {
		if db.dialect == Postgres {
			// No bill may change between dropping the deltas and counting.
			if _, err := tx.r.exec(ctx, `LOCK TABLE bills IN SHARE MODE`); err != nil {
				return err
			}
		}
		for _, q := range []string{`DELETE FROM bill_count_deltas`, `DELETE FROM bill_day_counts`,
			`INSERT INTO bill_day_counts (company_id, environment, status, due_day, bills)
			SELECT company_id, environment, status, ` + dueDaySQL + `, COUNT(*) FROM bills
			GROUP BY company_id, environment, status, ` + dueDaySQL} {
			if _, err := tx.r.exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}))
}

// countAndRatesQuery reads the company's rates and payment expiry and the
// listing's count in one row: they price the page's penalties.
func (l listing) countAndRatesQuery() (string, []any) {
	q, args := l.countQuery()
	return `SELECT c.fine_rate, c.monthly_interest_rate, c.payment_expiry_hours, (` + q + `) FROM companies c WHERE c.id = ?`, append(args, l.companyID)
}
