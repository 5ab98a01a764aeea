package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"parcela"
)

const billingColumns = `id, company_id, environment, order_id, payment_configuration_id, origin_billing_id, amount_cents, due_day,
	installments, status, cancelation_reason, finished_at, signature_remote_ip, signature_user_agent, created_at, updated_at`

const billingSelect = `SELECT ` + billingColumns + ` FROM billings`

// billingFields returns the scan destinations of billingColumns and the
// step that converts them once scanned, so a billing can share a row with
// other tables.
func billingFields(b *parcela.Billing) ([]any, func()) {
	var env string
	var origin, reason sql.NullString
	var finished sql.NullInt64
	var created, updated int64
	dests := []any{&b.ID, &b.CompanyID, &env, &b.OrderID, &b.PaymentConfigurationID, &origin, &b.AmountCents, &b.DueDay, &b.Installments,
		&b.Status, &reason, &finished, &b.SignatureRemoteIP, &b.SignatureUserAgent, &created, &updated}
	return dests, func() {
		b.Environment = parcela.Environment(env)
		b.OriginBillingID, b.CancelationReason, b.FinishedAt = nullString(origin), nullString(reason), fromNullMS(finished)
		b.CreatedAt, b.UpdatedAt = fromMS(created), fromMS(updated)
	}
}

func scanBilling(row rowScanner) (*parcela.Billing, error) {
	var b parcela.Billing
	dests, finish := billingFields(&b)
	if err := row.Scan(dests...); err != nil {
		return nil, err
	}
	finish()
	return &b, nil
}

// withTail appends more destinations to a scan: a joined row's extra columns.
type withTail struct {
	row  rowScanner
	tail []any
}

func (w withTail) Scan(dests ...any) error { return w.row.Scan(append(dests, w.tail...)...) }

const billColumns = `b.id, b.company_id, b.environment, b.billing_id, b.order_id, b.number, b.bill_type, b.status, b.amount_cents, b.due_date,
	b.effective_due_date, b.disable_penalties_until, b.paid_at, b.authentication_code, b.down_payment_cents, b.registration_fee_cents,
	b.amortization_cents, b.interest_cents, b.created_at, b.updated_at`

const billSelect = `SELECT ` + billColumns + ` FROM bills b`

func scanBill(row rowScanner) (*parcela.Bill, error) {
	var b parcela.Bill
	var env, typ string
	var due, eff, created, updated int64
	var disable, paid sql.NullInt64
	err := row.Scan(&b.ID, &b.CompanyID, &env, &b.BillingID, &b.OrderID, &b.Number, &typ, &b.Status, &b.AmountCents, &due, &eff, &disable, &paid,
		&b.AuthenticationCode, &b.Details.DownPaymentCents, &b.Details.RegistrationFeeCents, &b.Details.AmortizationCents, &b.Details.InterestCents,
		&created, &updated)
	if err != nil {
		return nil, err
	}
	b.Environment, b.Type = parcela.Environment(env), parcela.BillType(typ)
	b.DueDate, b.EffectiveDueDate = fromMS(due), fromMS(eff)
	b.DisablePenaltiesUntil, b.PaidAt = fromNullMS(disable), fromNullMS(paid)
	b.CreatedAt, b.UpdatedAt = fromMS(created), fromMS(updated)
	return &b, nil
}

const paymentSelect = `SELECT p.id, p.company_id, p.environment, p.bill_id, p.payment_method, p.status, p.amount_cents, p.paid_amount_cents,
	p.refunded_amount_cents, p.paid_at, p.refunded_at, p.expires_at, p.installments, p.nosso_numero, p.barcode, p.barcode_digits, p.pix_code,
	p.refused_reason, p.refused_reason_description, p.created_at, p.updated_at FROM payments p`

func scanPayment(row rowScanner) (*parcela.Payment, error) {
	var p parcela.Payment
	var env string
	var paid, refunded sql.NullInt64
	var nosso, barcode, digits, pix, refused, refusedDesc sql.NullString
	var expires, created, updated int64
	err := row.Scan(&p.ID, &p.CompanyID, &env, &p.BillID, &p.Method, &p.Status, &p.AmountCents, &p.PaidAmountCents, &p.RefundedAmountCents,
		&paid, &refunded, &expires, &p.Installments, &nosso, &barcode, &digits, &pix, &refused, &refusedDesc, &created, &updated)
	if err != nil {
		return nil, err
	}
	p.Environment = parcela.Environment(env)
	p.PaidAt, p.RefundedAt, p.ExpiresAt = fromNullMS(paid), fromNullMS(refunded), fromMS(expires)
	p.NossoNumero, p.Barcode, p.BarcodeDigits, p.PixCode = nullString(nosso), nullString(barcode), nullString(digits), nullString(pix)
	p.RefusedReason, p.RefusedReasonDescription = nullString(refused), nullString(refusedDesc)
	p.CreatedAt, p.UpdatedAt = fromMS(created), fromMS(updated)
	return &p, nil
}

func configurationByID(ctx context.Context, q querier, db *DB, id string) (*parcela.PaymentConfiguration, error) {
	pc, err := scanConfiguration(q.QueryRowContext(ctx, db.rebind(configurationSelect+` WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("payment configuration")
	}
	return pc, err
}

// loadBillings reads an order's billings with their configuration, bills
// and payments, in three queries whatever the number of bills.
func loadBillings(ctx context.Context, q querier, db *DB, orderID string) ([]*parcela.Billing, error) {
	rows, err := q.QueryContext(ctx, db.rebind(billingSelect+` WHERE order_id = ? ORDER BY created_at, id`), orderID)
	if err != nil {
		return nil, err
	}
	var billings []*parcela.Billing
	byID := map[string]*parcela.Billing{}
	for rows.Next() {
		b, err := scanBilling(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		b.Bills = []*parcela.Bill{}
		billings = append(billings, b)
		byID[b.ID] = b
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(billings) == 0 {
		return billings, err
	}
	for _, b := range billings {
		if b.PaymentConfiguration, err = configurationByID(ctx, q, db, b.PaymentConfigurationID); err != nil {
			return nil, err
		}
	}
	bills, err := queryBills(ctx, q, db, billSelect+` WHERE b.order_id = ? ORDER BY b.number`, orderID)
	if err != nil {
		return nil, err
	}
	for _, bill := range bills {
		if b := byID[bill.BillingID]; b != nil {
			b.Bills = append(b.Bills, bill)
		}
	}
	return billings, nil
}

// queryBills runs a bills query and attaches each bill's payments.
func queryBills(ctx context.Context, q querier, db *DB, query string, args ...any) ([]*parcela.Bill, error) {
	rows, err := q.QueryContext(ctx, db.rebind(query), args...)
	if err != nil {
		return nil, err
	}
	var bills []*parcela.Bill
	for rows.Next() {
		b, err := scanBill(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		b.Payments = []*parcela.Payment{}
		bills = append(bills, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return bills, attachPayments(ctx, q, db, bills)
}

// attachPayments loads the payments of bills in one query.
func attachPayments(ctx context.Context, q querier, db *DB, bills []*parcela.Bill) error {
	if len(bills) == 0 {
		return nil
	}
	byID := make(map[string]*parcela.Bill, len(bills))
	args := make([]any, 0, len(bills))
	for _, b := range bills {
		byID[b.ID] = b
		args = append(args, b.ID)
	}
	rows, err := q.QueryContext(ctx, db.rebind(paymentSelect+` WHERE p.bill_id IN (`+placeholders(len(args))+`) ORDER BY p.created_at, p.id`), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return err
		}
		if b := byID[p.BillID]; b != nil {
			b.Payments = append(b.Payments, p)
		}
	}
	return rows.Err()
}
