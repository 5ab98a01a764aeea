package sqldb

import (
	"context"
	"database/sql"

	"parcela"
)

// billingColumns are a billing's columns, of the table aliased bl.
const billingColumns = `bl.id, bl.company_id, bl.environment, bl.order_id, bl.payment_configuration_id, bl.origin_billing_id, bl.amount_cents,
	bl.due_day, bl.installments, bl.status, bl.cancelation_reason, bl.finished_at, bl.signature_remote_ip, bl.signature_user_agent,
	bl.created_at, bl.updated_at, bl.version`

// billingSelect reads billings, packed (see pack).
const billingSelect = `SELECT ` + packOpen + billingColumns + `) FROM billings bl`

// billingFields returns the scan destinations of billingColumns and the
// step that converts them once scanned, so a billing can share a row with
// other tables.
func billingFields(b *parcela.Billing) ([]any, func()) {
	var env string
	var origin, reason sql.NullString
	var finished sql.NullInt64
	var created, updated int64
	dests := []any{&b.ID, &b.CompanyID, &env, &b.OrderID, &b.PaymentConfigurationID, &origin, &b.AmountCents, &b.DueDay, &b.Installments,
		&b.Status, &reason, &finished, &b.SignatureRemoteIP, &b.SignatureUserAgent, &created, &updated, &b.Version}
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
	b.Bills = []*parcela.Bill{}
	return &b, nil
}

// loadBilling reads one billing of the caller with configuration, bills and payments.
func loadBilling(ctx context.Context, r runner, a parcela.Auth, id string) (*parcela.Billing, error) {
	b, err := scanBilling(r.queryRow(ctx, billingSelect+` WHERE bl.id = ? AND bl.company_id = ? AND bl.environment = ?`, id, a.CompanyID, string(a.Environment)))
	if err != nil {
		return nil, notFound(err, "billing")
	}
	if b.PaymentConfiguration, err = configurationByID(ctx, r, b.PaymentConfigurationID); err != nil {
		return nil, err
	}
	// By its order's index: bills keep no index of their own by billing.
	bills, err := queryBills(ctx, r, billSelect+` WHERE b.order_id = ? AND b.billing_id = ? ORDER BY b.number`, b.OrderID, b.ID)
	if err != nil {
		return nil, err
	}
	if bills != nil {
		b.Bills = bills
	}
	return b, nil
}

// Billing returns one of the caller's billings.
func (db *DB) Billing(ctx context.Context, a parcela.Auth, id string) (*parcela.Billing, error) {
	b, err := loadBilling(ctx, db.reader, a, id)
	return b, failed("read billing", err)
}

// attachBillingParts reads the configurations of an order's billings, read
// before, and their bills and payments in two queries whatever their
// number.
func attachBillingParts(ctx context.Context, r runner, orderID string, billings []*parcela.Billing) ([]*parcela.Billing, error) {
	if len(billings) == 0 {
		return []*parcela.Billing{}, nil
	}
	byID := map[string]*parcela.Billing{}
	for _, b := range billings {
		byID[b.ID] = b
		var err error
		if b.PaymentConfiguration, err = configurationByID(ctx, r, b.PaymentConfigurationID); err != nil {
			return nil, err
		}
	}
	bills, err := queryBills(ctx, r, billSelect+` WHERE b.order_id = ? ORDER BY b.number`, orderID)
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

// insertBilling stores a billing and its bills, the bills in one INSERT.
func insertBilling(ctx context.Context, p *pipeline, b *parcela.Billing) error {
	err := p.exec(ctx, nil, `INSERT INTO billings (id, company_id, environment, order_id, payment_configuration_id, amount_cents, due_day, installments,
		status, signature_remote_ip, signature_user_agent, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.ID, b.CompanyID, string(b.Environment), b.OrderID, b.PaymentConfigurationID, b.AmountCents, b.DueDay, b.Installments,
		b.Status, b.SignatureRemoteIP, b.SignatureUserAgent, ms64(b.CreatedAt), ms64(b.UpdatedAt))
	if err != nil {
		return err
	}
	args := make([]any, 0, 18*len(b.Bills))
	for _, bill := range b.Bills {
		d := bill.Details
		args = append(args, bill.ID, bill.CompanyID, string(bill.Environment), bill.BillingID, bill.OrderID, bill.Number, string(bill.Type), bill.Status,
			bill.AmountCents, ms64(bill.DueDate), ms64(bill.EffectiveDueDate), bill.AuthenticationCode, d.DownPaymentCents, d.RegistrationFeeCents,
			d.AmortizationCents, d.InterestCents, ms64(bill.CreatedAt), ms64(bill.UpdatedAt))
	}
	return p.insertMany(ctx, `INSERT INTO bills (id, company_id, environment, billing_id, order_id, number, bill_type, status, amount_cents, due_date,
		effective_due_date, authentication_code, down_payment_cents, registration_fee_cents, amortization_cents, interest_cents, created_at, updated_at)`,
		`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, 18, args)
}
