package sqldb

import (
	"context"
	"strings"
)

// countQuery counts the bills a listing's filter matches. Filters on status
// and due days are answered from the per-hour counts (migration 00003),
// whose cost is the hours in the range (at most 24 rows a day), not the
// bills; the others select few bills (a billing's, an order's) or none of
// the counts' keys (paid_at), and count the bills themselves.
func (l listing) countQuery() (string, []any) {
	if l.countBills {
		return `SELECT COUNT(*) FROM ` + l.bills + ` WHERE ` + l.where(), l.args
	}
	cond := strings.Join(l.countCond, " AND ")
	return `SELECT COALESCE(SUM(n), 0) FROM (
		SELECT bills AS n FROM bill_day_counts WHERE ` + cond + `
		UNION ALL
		SELECT delta AS n FROM bill_count_deltas WHERE ` + cond + `) counts`, append(append([]any{}, l.countArgs...), l.countArgs...)
}

// CompactBillCounts folds the count deltas written since the last run into
// the per-hour counts, and drops hours whose count fell to zero. It returns
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
			res, err := tx.r.exec(ctx, `WITH moved AS (DELETE FROM bill_count_deltas RETURNING company_id, environment, status, due_hour, delta)
				INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
				SELECT company_id, environment, status, due_hour, SUM(delta) FROM moved GROUP BY company_id, environment, status, due_hour
				ON CONFLICT (company_id, environment, status, due_hour) DO UPDATE SET bills = bill_day_counts.bills + excluded.bills`)
			if err != nil {
				return err
			}
			if folded, err = res.RowsAffected(); err != nil {
				return err
			}
		} else {
			// SQLite has one writer: nothing is appended between the two.
			if _, err := tx.r.exec(ctx, `INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
				SELECT company_id, environment, status, due_hour, SUM(delta) FROM bill_count_deltas WHERE true
				GROUP BY company_id, environment, status, due_hour
				ON CONFLICT (company_id, environment, status, due_hour) DO UPDATE SET bills = bill_day_counts.bills + excluded.bills`); err != nil {
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

// RecountBills rebuilds the per-hour counts from the bills themselves, for a
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
			`INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
			SELECT company_id, environment, status, due_date - due_date % 3600000, COUNT(*) FROM bills
			GROUP BY company_id, environment, status, due_date - due_date % 3600000`} {
			if _, err := tx.r.exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}))
}

// countAndRatesQuery reads the company's rates and the listing's count in
// one row: the rates price the page's penalties.
func (l listing) countAndRatesQuery() (string, []any) {
	q, args := l.countQuery()
	return `SELECT c.fine_rate, c.monthly_interest_rate, (` + q + `) FROM companies c WHERE c.id = ?`, append(args, l.companyID)
}
