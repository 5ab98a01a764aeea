package sqldb

import (
	"context"
	"strings"

	"parcela"
)

// sweepBatch bounds the rows a sweep handles per run; the job runs again soon.
const sweepBatch = 500

type ownedID struct {
	id   string
	auth parcela.Auth
}

// ownedIDs runs a sweep's selection. q holds one %s where the optional
// company scope goes (see DB.SweepScope). It reads on a reader: on SQLite
// the writer is one connection, and a selection over a million bills held
// it, and every charge behind it, for most of a second. Each sweep re-checks
// its row inside the transaction that changes it.
func (db *DB) ownedIDs(ctx context.Context, companyColumn, q string, args ...any) ([]ownedID, error) {
	scope := ""
	if db.SweepScope != "" {
		scope = " AND " + companyColumn + " = ?"
		args = append([]any{db.SweepScope}, args...)
	}
	q = strings.Replace(q, "%s", scope, 1)
	rows, err := db.reader.QueryContext(ctx, db.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ownedID
	for rows.Next() {
		var o ownedID
		var env string
		if err := rows.Scan(&o.id, &o.auth.CompanyID, &env); err != nil {
			return nil, err
		}
		o.auth.Environment = parcela.Environment(env)
		out = append(out, o)
	}
	return out, rows.Err()
}

// ExpireDuePayments expires unpaid payments past their expiry: each in its
// own transaction, so one failure does not hold back the rest.
func (db *DB) ExpireDuePayments(ctx context.Context) (int, error) {
	ids, err := db.ownedIDs(ctx, "company_id", `SELECT id, company_id, environment FROM payments WHERE status = 'unpaid'%s AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
		ms64(db.Clock.Now()), sweepBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range ids {
		_, err := db.ExpirePayment(ctx, o.auth, o.id)
		if parcela.ErrorCode(err) == parcela.EINVALIDSTATE {
			continue // paid or expired meanwhile
		} else if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// MarkOverdue moves unpaid installments past their effective due date to
// overdue. Down payments are not swept here: they expire instead.
func (db *DB) MarkOverdue(ctx context.Context) (int, error) {
	ids, err := db.ownedIDs(ctx, "company_id", `SELECT id, company_id, environment FROM bills WHERE status = 'pending'%s AND effective_due_date < ? AND bill_type = 'installment'
		ORDER BY effective_due_date LIMIT ?`, ms64(db.Clock.Now()), sweepBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range ids {
		err := db.inTx(ctx, func(tx *Tx) error {
			res, err := tx.exec(ctx, `UPDATE bills SET status = ?, updated_at = ? WHERE id = ? AND status = ? AND effective_due_date < ?`,
				parcela.BillOverdue, ms64(tx.Now), o.id, parcela.BillPending, ms64(tx.Now))
			if err != nil {
				return err
			}
			if rows, _ := res.RowsAffected(); rows == 0 {
				return nil
			}
			n++
			f, err := billForm(ctx, tx, o.auth, o.id)
			if err != nil {
				return err
			}
			return writeEvent(ctx, tx, o.auth.CompanyID, o.auth.Environment, "bill", o.id, "overdue", f)
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// IssueDueInstallments issues the payment of every open installment of an
// active billing whose due date is within the company's issue window and
// that has no live payment yet.
func (db *DB) IssueDueInstallments(ctx context.Context) (int, error) {
	ids, err := db.ownedIDs(ctx, "b.company_id", `SELECT b.id, b.company_id, b.environment FROM bills b
		JOIN billings bl ON bl.id = b.billing_id JOIN companies c ON c.id = b.company_id
		WHERE b.status IN ('pending', 'overdue')%s AND b.bill_type = 'installment' AND bl.status = 'active'
		AND b.due_date - c.installment_issue_days * 86400000 <= ?
		AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.bill_id = b.id AND p.status IN ('unpaid', 'paid'))
		ORDER BY b.due_date LIMIT ?`, ms64(db.Clock.Now()), sweepBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range ids {
		nosso, err := db.NextNossoNumero(ctx)
		if err != nil {
			return n, err
		}
		err = db.inTx(ctx, func(tx *Tx) error {
			var live int
			if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM payments WHERE bill_id = ? AND status IN ('unpaid', 'paid')`, o.id).Scan(&live); err != nil || live > 0 {
				return err
			}
			bill, _, err := loadBill(ctx, tx.q, db, o.auth, o.id)
			if err != nil {
				return err
			}
			c, err := companyByID(ctx, tx.q, tx.db, o.auth.CompanyID)
			if err != nil {
				return err
			}
			if _, err := issueInstallment(ctx, tx, c, bill, nosso); err != nil {
				return err
			}
			n++
			return nil
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
