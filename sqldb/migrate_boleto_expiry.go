package sqldb

import (
	"context"
	"database/sql"
	"time"

	"github.com/pressly/goose/v3"

	"parcela"
)

// boletoExpiryMigration is migration 28, in Go: portable SQL cannot count
// business days.
//
// The earliest releases stored a boleto's expires_at as the instant it fell
// due: a first bill's, due hours after the charge, expired mid-day (and
// the bill's effective_due_date was that instant too), a late
// installment's hours after its issue, an on-time installment's at the end
// of its due day (which 00025 then made the next midnight), none with the
// settlement grace. This release holds every boleto payable through the
// end of its last payable day and the company's grace (BoletoExpiry), as
// the bank takes it on any minute of that date; carried over, such a
// boleto refused the bank's notice of a payment made the evening of its
// due date, and the lapse sweep then canceled the order paid (an audit of
// upgrades). Paid, canceled and expired boletos are left, and events sent
// before keep the expiry they carried.
func (db *DB) boletoExpiryMigration() *goose.Migration {
	return goose.NewGoMigration(28, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		return moveEarlyBoletoExpiries(ctx, tx, db.binder, "")
	}}, nil)
}

// earlyBoleto is an unpaid boleto as stored, with its bill's dates.
type earlyBoleto struct {
	id, billID, billType string
	expires, due, eff    int64
	grace                int
}

// mended is b's expiry as this release would have written it, and its
// first bill's effective due date (0 when the bill is right), or ok false
// when b is as this release writes it.
//
// Every boleto this release issues expires at a São Paulo midnight, after
// its grace. A boleto expiring at the millisecond before one was issued
// by a release before 00025 (an instance still serving during a rolling
// upgrade past it), its grace already counted: it moves to that midnight,
// as 00025 moved the others. One at another instant is an earliest
// release's due instant. An installment's at the midnight ending its
// effective due date is an earliest release's on-time installment, which
// gets its due day moved to a business day and the company's grace (one
// issued while its company had no grace and has one since gets it too,
// the payer's way); this release's own, without grace, is left as it is.
func (b earlyBoleto) mended() (expires, eff int64, ok bool) {
	at := time.UnixMilli(b.expires).In(parcela.SaoPaulo)
	installment := b.billType == string(parcela.BillTypeInstallment)
	if next := at.Add(time.Millisecond); next.Equal(parcela.SaoPauloDate(next)) {
		// A release before 00025's, its grace counted; an installment's
		// is still checked below (a review: one at its due day's last
		// millisecond got no grace, and a second run gave it).
		at, expires = next, next.UnixMilli()
	}
	switch {
	case !at.Equal(parcela.SaoPauloDate(at)):
		expires = parcela.BoletoExpiry(at, b.grace).UnixMilli()
		if !installment && b.eff == b.due {
			eff = parcela.BoletoPayableUntil(time.UnixMilli(b.due)).UnixMilli()
		}
	case installment && at.UnixMilli() == parcela.ExpiryAfter(time.UnixMilli(b.eff)).UnixMilli():
		// An earliest release's on-time installment (whose calendar took
		// 31 December for a business day), or one issued without grace.
		expires = max(expires, parcela.BoletoExpiry(time.UnixMilli(b.due), b.grace).UnixMilli())
	}
	return expires, eff, expires > b.expires || eff != 0
}

func moveEarlyBoletoExpiries(ctx context.Context, tx *sql.Tx, b *binder, company string) error {
	rows, err := tx.QueryContext(ctx, b.bind(`SELECT p.id, p.expires_at, c.boleto_grace_business_days, bl.id, bl.bill_type, bl.due_date, bl.effective_due_date
		FROM payments p JOIN companies c ON c.id = p.company_id JOIN bills bl ON bl.id = p.bill_id
		WHERE p.payment_method = 'boleto' AND p.status = 'unpaid' AND (? = '' OR p.company_id = ?)`), company, company)
	if err != nil {
		return err
	}
	type move struct {
		id, billID   string
		expires, eff int64
	}
	var moves []move
	for rows.Next() {
		var e earlyBoleto
		if err := rows.Scan(&e.id, &e.expires, &e.grace, &e.billID, &e.billType, &e.due, &e.eff); err != nil {
			rows.Close()
			return err
		}
		if expires, eff, ok := e.mended(); ok {
			moves = append(moves, move{e.id, e.billID, max(expires, e.expires), eff})
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	// Bills before payments, the order every writer locks them in: an
	// instance of the earlier release may still be serving.
	if err := moveEarlyEffectiveDueDates(ctx, tx, b, company); err != nil {
		return err
	}
	for _, m := range moves {
		if m.eff != 0 {
			if _, err := tx.ExecContext(ctx, b.bind(`UPDATE bills SET effective_due_date = ? WHERE id = ? AND status = 'pending'`), m.eff, m.billID); err != nil {
				return err
			}
		}
	}
	q := b.bind(`UPDATE payments SET expires_at = ? WHERE id = ? AND status = 'unpaid'`)
	for _, m := range moves {
		if _, err := tx.ExecContext(ctx, q, m.expires, m.id); err != nil {
			return err
		}
	}
	return nil
}

// moveEarlyEffectiveDueDates sets a pending installment's
// effective_due_date to its due date moved to a business day where it is
// earlier: the earliest releases' calendar took 31 December for a
// business day, and an installment due then turned overdue, late-priced,
// on 1 January (a review). Every installment this release writes has it
// (ScheduledBill.EffectiveDueDate); an overdue one stays overdue.
func moveEarlyEffectiveDueDates(ctx context.Context, tx *sql.Tx, b *binder, company string) error {
	rows, err := tx.QueryContext(ctx, b.bind(`SELECT id, due_date, effective_due_date FROM bills
		WHERE bill_type = 'installment' AND status = 'pending' AND (? = '' OR company_id = ?)`), company, company)
	if err != nil {
		return err
	}
	type move struct {
		id  string
		eff int64
	}
	var moves []move
	for rows.Next() {
		var id string
		var due, eff int64
		if err := rows.Scan(&id, &due, &eff); err != nil {
			rows.Close()
			return err
		}
		if want := parcela.EffectiveDueDate(time.UnixMilli(due)).UnixMilli(); want > eff {
			moves = append(moves, move{id, want})
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	q := b.bind(`UPDATE bills SET effective_due_date = ? WHERE id = ? AND status = 'pending'`)
	for _, m := range moves {
		if _, err := tx.ExecContext(ctx, q, m.eff, m.id); err != nil {
			return err
		}
	}
	return nil
}
