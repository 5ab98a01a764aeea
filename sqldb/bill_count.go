package sqldb

import (
	"context"
	"strings"
)

// countBills counts the bills a listing's filter matches. Filters on status
// and due days are answered from the per-hour counts (migration 00003), whose
// cost is the hours in the range (at most 24 rows a day), not the bills; the others select few bills
// (a billing's, an order's) or none of the counts' keys (paid_at), and count
// the bills themselves.
func (db *DB) countBills(ctx context.Context, f BillFilter, cond string, args []any) (int, error) {
	q, args := billCountQuery(f, cond, args)
	var total int
	err := db.queryRow(ctx, q, args...).Scan(&total)
	return total, err
}

func billCountQuery(f BillFilter, cond string, args []any) (string, []any) {
	if f.BillingID != "" || f.OrderID != "" || f.PaidFrom != nil || f.PaidTo != nil {
		return `SELECT COUNT(*) FROM bills b WHERE ` + cond, args
	}
	// cond names only company, environment, status and due_date here; the
	// due-date bounds are São Paulo midnights, whole UTC hours, so the hour
	// buckets of the count tables answer them exactly.
	cond = strings.ReplaceAll(strings.ReplaceAll(cond, "b.due_date", "due_hour"), "b.", "")
	return `SELECT COALESCE(SUM(n), 0) FROM (
		SELECT bills AS n FROM bill_day_counts WHERE ` + cond + `
		UNION ALL
		SELECT delta AS n FROM bill_count_deltas WHERE ` + cond + `) c`, append(args[:len(args):len(args)], args...)
}

// CompactBillCounts folds the count deltas written since the last run into
// the per-hour counts, and drops hours whose count fell to zero. It returns
// how many deltas it folded. A count reads both tables in one statement, so
// it is exact before, during and after a compaction.
func (db *DB) CompactBillCounts(ctx context.Context) (int, error) {
	// Most seconds there is nothing to fold: check on a reader, so that an
	// idle compactor neither waits for SQLite's writer nor writes a page.
	var pending bool
	if err := db.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bill_count_deltas)`).Scan(&pending); err != nil || !pending {
		return 0, err
	}
	var n int
	err := db.inTx(ctx, func(tx *Tx) error {
		var res interface{ RowsAffected() (int64, error) }
		var err error
		if db.dialect == Postgres {
			// One statement: it folds exactly the deltas it deletes, while
			// other transactions keep appending.
			res, err = tx.exec(ctx, `WITH moved AS (DELETE FROM bill_count_deltas RETURNING company_id, environment, status, due_hour, delta)
				INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
				SELECT company_id, environment, status, due_hour, SUM(delta) FROM moved GROUP BY company_id, environment, status, due_hour
				ON CONFLICT (company_id, environment, status, due_hour) DO UPDATE SET bills = bill_day_counts.bills + excluded.bills`)
		} else {
			// SQLite has one writer: nothing is appended between the two.
			if _, err = tx.exec(ctx, `INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
				SELECT company_id, environment, status, due_hour, SUM(delta) FROM bill_count_deltas WHERE true
				GROUP BY company_id, environment, status, due_hour
				ON CONFLICT (company_id, environment, status, due_hour) DO UPDATE SET bills = bill_day_counts.bills + excluded.bills`); err == nil {
				res, err = tx.exec(ctx, `DELETE FROM bill_count_deltas`)
			}
		}
		if err != nil {
			return err
		}
		folded, _ := res.RowsAffected()
		n = int(folded)
		if n == 0 {
			return nil
		}
		_, err = tx.exec(ctx, `DELETE FROM bill_day_counts WHERE bills = 0`)
		return err
	})
	return n, err
}

// RecountBills rebuilds the per-hour counts from the bills themselves, for a
// bulk load that ran without the count triggers, or a repair.
func (db *DB) RecountBills(ctx context.Context) error {
	return db.inTx(ctx, func(tx *Tx) error {
		if db.dialect == Postgres {
			// No bill may change between dropping the deltas and counting.
			if _, err := tx.exec(ctx, `LOCK TABLE bills IN SHARE MODE`); err != nil {
				return err
			}
		}
		for _, q := range []string{`DELETE FROM bill_count_deltas`, `DELETE FROM bill_day_counts`,
			`INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
			SELECT company_id, environment, status, due_date - due_date % 3600000, COUNT(*) FROM bills
			GROUP BY company_id, environment, status, due_date - due_date % 3600000`} {
			if _, err := tx.exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}
