package sqldb

import (
	"context"
	"database/sql"

	"parcela"
)

// paymentColumns are a payment's columns (aliased p), as scanPayment reads
// them.
const paymentColumns = `p.id, p.company_id, p.environment, p.bill_id, p.payment_method, p.status, p.amount_cents, p.paid_amount_cents,
	p.refunded_amount_cents, p.paid_at, p.refunded_at, p.expires_at, p.installments, p.nosso_numero, p.barcode, p.barcode_digits, p.pix_code,
	p.refused_reason, p.refused_reason_description, p.card_brand, p.card_last_digits, p.created_at, p.updated_at`

// paymentSelect reads payments, packed (see pack).
const paymentSelect = `SELECT ` + packOpen + paymentColumns + `) FROM payments p`

func scanPayment(row rowScanner) (*parcela.Payment, error) {
	var p parcela.Payment
	var env string
	var paid, refunded sql.NullInt64
	var nosso, barcode, digits, pix, refused, refusedDesc, brand, last sql.NullString
	var expires, created, updated int64
	err := row.Scan(&p.ID, &p.CompanyID, &env, &p.BillID, &p.Method, &p.Status, &p.AmountCents, &p.PaidAmountCents, &p.RefundedAmountCents,
		&paid, &refunded, &expires, &p.Installments, &nosso, &barcode, &digits, &pix, &refused, &refusedDesc, &brand, &last, &created, &updated)
	if err != nil {
		return nil, err
	}
	p.Environment = parcela.Environment(env)
	p.PaidAt, p.RefundedAt, p.ExpiresAt = fromNullMS(paid), fromNullMS(refunded), fromMS(expires)
	p.NossoNumero, p.Barcode, p.BarcodeDigits, p.PixCode = nullString(nosso), nullString(barcode), nullString(digits), nullString(pix)
	p.RefusedReason, p.RefusedReasonDescription = nullString(refused), nullString(refusedDesc)
	if brand.Valid && last.Valid {
		p.Card = &parcela.CardSummary{Brand: parcela.CardBrand(brand.String), LastFour: last.String}
	}
	p.CreatedAt, p.UpdatedAt = fromMS(created), fromMS(updated)
	return &p, nil
}

// attachPayments loads the payments of bills in one query, oldest first.
func attachPayments(ctx context.Context, r runner, bills []*parcela.Bill) error {
	if len(bills) == 0 {
		return nil
	}
	byID := make(map[string]*parcela.Bill, len(bills))
	args := make([]any, 0, len(bills))
	for _, b := range bills {
		byID[b.ID] = b
		args = append(args, b.ID)
	}
	payments, err := collect(ctx, r, scanPayment, paymentSelect+` WHERE p.bill_id IN (`+placeholders(len(args))+`) ORDER BY p.created_at, p.id`, args...)
	for _, p := range payments {
		if b := byID[p.BillID]; b != nil {
			b.Payments = append(b.Payments, p)
		}
	}
	return err
}

// insertPayments stores new payments in one INSERT: issued ones, and card
// attempts as their acquirer decided them (paid or refused).
func insertPayments(ctx context.Context, p *pipeline, ps []*parcela.Payment) error {
	args := make([]any, 0, 21*len(ps))
	for _, pay := range ps {
		var brand, last *string
		if pay.Card != nil {
			b := string(pay.Card.Brand)
			brand, last = &b, &pay.Card.LastFour
		}
		args = append(args, pay.ID, pay.CompanyID, string(pay.Environment), pay.BillID, pay.Method, pay.Status, pay.AmountCents, ms64(pay.ExpiresAt),
			pay.Installments, pay.NossoNumero, pay.Barcode, pay.BarcodeDigits, pay.PixCode, pay.PaidAmountCents, msPtr(pay.PaidAt), pay.RefusedReason,
			pay.RefusedReasonDescription, brand, last, ms64(pay.CreatedAt), ms64(pay.UpdatedAt))
	}
	return p.insertMany(ctx, `INSERT INTO payments (id, company_id, environment, bill_id, payment_method, status, amount_cents, expires_at,
		installments, nosso_numero, barcode, barcode_digits, pix_code, paid_amount_cents, paid_at, refused_reason, refused_reason_description,
		card_brand, card_last_digits, created_at, updated_at)`, `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, 21, args)
}

// PublicPayment finds a payment of an environment by id alone, for the
// public image routes.
func (db *DB) PublicPayment(ctx context.Context, env parcela.Environment, id string) (*parcela.Payment, error) {
	p, err := scanPayment(db.reader.queryRow(ctx, paymentSelect+` WHERE p.id = ? AND p.environment = ?`, id, string(env)))
	return p, failed("read payment", notFound(err, "payment"))
}

// SettlementNotice finds a notice the caller's bank applied, by its id.
func (db *DB) SettlementNotice(ctx context.Context, a parcela.Auth, noticeID string) (*parcela.SettlementNotice, error) {
	n := parcela.SettlementNotice{ID: noticeID, CompanyID: a.CompanyID, Environment: a.Environment}
	var paidAt, created int64
	err := db.reader.queryRow(ctx, `SELECT payment_id, paid_amount_cents, paid_at, created_at FROM settlement_notices
		WHERE company_id = ? AND environment = ? AND notice_id = ?`, a.CompanyID, string(a.Environment), noticeID).Scan(&n.PaymentID, &n.PaidAmountCents, &paidAt, &created)
	if err != nil {
		return nil, failed("read settlement notice", notFound(err, "settlement notice"))
	}
	n.PaidAt, n.CreatedAt = fromMS(paidAt), fromMS(created)
	return &n, nil
}

// insertNotice stores the bank's notice a change applies; one already
// stored under its id is a unique violation, which the store reports as a
// conflict: the use case reads again and finds it applied.
func insertNotice(ctx context.Context, p *pipeline, n *parcela.SettlementNotice) error {
	return p.exec(ctx, nil, `INSERT INTO settlement_notices (company_id, environment, notice_id, payment_id, paid_amount_cents, paid_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, n.CompanyID, string(n.Environment), n.ID, n.PaymentID, n.PaidAmountCents, ms64(n.PaidAt), ms64(n.CreatedAt))
}
