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
// due: a first bill's, due hours after the charge, expired mid-day, and a
// late installment's hours after its issue, with no end of day and no
// settlement grace. This release holds every boleto payable through the
// end of its last payable day and the company's grace (BoletoExpiry), as
// the bank takes it on any minute of that date; carried over, such a
// boleto refused the bank's notice of a payment made the evening of its
// due date, and the lapse sweep then canceled the order paid (an audit of
// upgrades). Every boleto a later release wrote expires at a midnight of
// São Paulo (00025 moved the last ones that ended a millisecond before),
// so one that does not is such a boleto, and its expiry moves to
// BoletoExpiry of that instant. Paid, canceled and expired boletos are
// left, and events sent before keep the expiry they carried.
func (db *DB) boletoExpiryMigration() *goose.Migration {
	return goose.NewGoMigration(28, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
		return moveEarlyBoletoExpiries(ctx, tx, db.binder)
	}}, nil)
}

func moveEarlyBoletoExpiries(ctx context.Context, tx *sql.Tx, b *binder) error {
	rows, err := tx.QueryContext(ctx, `SELECT p.id, p.expires_at, c.boleto_grace_business_days FROM payments p
		JOIN companies c ON c.id = p.company_id WHERE p.payment_method = 'boleto' AND p.status = 'unpaid'`)
	if err != nil {
		return err
	}
	type move struct {
		id string
		to int64
	}
	var moves []move
	for rows.Next() {
		var id string
		var expires int64
		var grace int
		if err := rows.Scan(&id, &expires, &grace); err != nil {
			rows.Close()
			return err
		}
		at := time.UnixMilli(expires).In(parcela.SaoPaulo)
		if at.Equal(parcela.SaoPauloDate(at)) {
			continue
		}
		if to := parcela.BoletoExpiry(at, grace).UnixMilli(); to > expires {
			moves = append(moves, move{id, to})
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	q := b.bind(`UPDATE payments SET expires_at = ? WHERE id = ? AND status = 'unpaid'`)
	for _, m := range moves {
		if _, err := tx.ExecContext(ctx, q, m.to, m.id); err != nil {
			return err
		}
	}
	return nil
}
