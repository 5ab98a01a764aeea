package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"parcela"
)

// billForEvent loads a bill in bill-endpoint form as of this transaction.
func billForm(ctx context.Context, tx *Tx, a parcela.Auth, billID string) (parcela.BillEndpointForm, error) {
	b, c, err := loadBill(ctx, tx.q, tx.db, a, billID)
	if err != nil {
		return parcela.BillEndpointForm{}, err
	}
	return parcela.NewBillEndpointForm(b, c, tx.Now, tx.db.links(a.Environment)), nil
}

// loadBill reads one bill of the caller with its payments, billing summary
// and the company whose rates price its penalties.
//
// The bill, its billing and the rates come in one joined row; the payments
// in a second query.
func loadBill(ctx context.Context, q querier, db *DB, a parcela.Auth, id string) (*parcela.Bill, *parcela.Company, error) {
	var billing parcela.Billing
	c := &parcela.Company{ID: a.CompanyID}
	tail, finish := billingFields(&billing)
	tail = append(tail, rate(&c.FineRate), rate(&c.MonthlyInterestRate))
	row := q.QueryRowContext(ctx, db.rebind(`SELECT `+billAndBillingColumns+`, c.fine_rate, c.monthly_interest_rate
		FROM bills b JOIN billings bl ON bl.id = b.billing_id JOIN companies c ON c.id = b.company_id
		WHERE b.id = ? AND b.company_id = ? AND b.environment = ?`), id, a.CompanyID, string(a.Environment))
	b, err := scanBill(withTail{row, tail})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, parcela.NotFound("bill")
	} else if err != nil {
		return nil, nil, err
	}
	finish()
	b.Billing, b.Payments = &billing, []*parcela.Payment{}
	return b, c, attachPayments(ctx, q, db, []*parcela.Bill{b})
}

// prefixed qualifies every column of a comma-separated list with p.
func prefixed(p, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// companyRates reads the penalty rates of a company (all a bill form needs).
func companyRates(ctx context.Context, q querier, db *DB, id string) (*parcela.Company, error) {
	c := &parcela.Company{ID: id}
	err := q.QueryRowContext(ctx, db.rebind(`SELECT fine_rate, monthly_interest_rate FROM companies WHERE id = ?`), id).
		Scan(rate(&c.FineRate), rate(&c.MonthlyInterestRate))
	return c, err
}

// cancelOpenBillings cancels every open billing of an order.
func cancelOpenBillings(ctx context.Context, tx *Tx, a parcela.Auth, orderID, reason string) error {
	if reason == parcela.ReasonExpired {
		reason = "down_payment_not_paid"
	}
	rows, err := tx.query(ctx, `SELECT id FROM billings WHERE order_id = ? AND status IN (?, ?)`, orderID, parcela.BillingWaitingPayment, parcela.BillingActive)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		if err := cancelBilling(ctx, tx, a, id, reason); err != nil {
			return err
		}
	}
	return rows.Err()
}

// cancelBilling moves an open billing to canceled, cancels its open bills
// and their unpaid payments, and writes every event.
func cancelBilling(ctx context.Context, tx *Tx, a parcela.Auth, billingID, reason string) error {
	now := ms64(tx.Now)
	res, err := tx.exec(ctx, `UPDATE billings SET status = ?, cancelation_reason = ?, updated_at = ? WHERE id = ? AND status IN (?, ?)`,
		parcela.BillingCanceled, reason, now, billingID, parcela.BillingWaitingPayment, parcela.BillingActive)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var status string
		if err := tx.queryRow(ctx, `SELECT status FROM billings WHERE id = ?`, billingID).Scan(&status); err != nil {
			return err
		}
		return parcela.Errorf(parcela.EINVALIDSTATE, "billing is %s; only waiting_payment or active billings can be canceled", status)
	}
	rows, err := tx.query(ctx, `SELECT id FROM bills WHERE billing_id = ? AND status IN (?, ?) ORDER BY number`, billingID, parcela.BillPending, parcela.BillOverdue)
	if err != nil {
		return err
	}
	var billIDs []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		billIDs = append(billIDs, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(billIDs) > 0 {
		ids := make([]any, len(billIDs))
		for i, id := range billIDs {
			ids[i] = id
		}
		in := placeholders(len(ids))
		if _, err := tx.exec(ctx, `UPDATE payments SET status = ?, updated_at = ? WHERE status = ? AND bill_id IN (`+in+`)`,
			append([]any{parcela.PaymentCanceled, now, parcela.PaymentUnpaid}, ids...)...); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `UPDATE bills SET status = ?, updated_at = ? WHERE id IN (`+in+`)`,
			append([]any{parcela.BillCanceled, now}, ids...)...); err != nil {
			return err
		}
	}
	for _, id := range billIDs {
		f, err := billForm(ctx, tx, a, id)
		if err != nil {
			return err
		}
		if err := writeEvent(ctx, tx, a.CompanyID, a.Environment, "bill", id, "canceled", f); err != nil {
			return err
		}
	}
	return writeBillingEvent(ctx, tx, a, billingID, "canceled")
}

// writeBillingEvent writes a billing event with the billing as GET
// /billings/{id} shows it now.
func writeBillingEvent(ctx context.Context, tx *Tx, a parcela.Auth, billingID, event string) error {
	b, err := loadBilling(ctx, tx.q, tx.db, a, billingID)
	if err != nil {
		return err
	}
	return writeEvent(ctx, tx, a.CompanyID, a.Environment, "billing", billingID, event, parcela.NewBillingOrderForm(b, tx.db.links(a.Environment)))
}

// loadBilling reads one billing of the caller with configuration, bills and payments.
func loadBilling(ctx context.Context, q querier, db *DB, a parcela.Auth, id string) (*parcela.Billing, error) {
	b, err := scanBilling(q.QueryRowContext(ctx, db.rebind(billingSelect+` WHERE id = ? AND company_id = ? AND environment = ?`), id, a.CompanyID, string(a.Environment)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("billing")
	} else if err != nil {
		return nil, err
	}
	if b.PaymentConfiguration, err = configurationByID(ctx, q, db, b.PaymentConfigurationID); err != nil {
		return nil, err
	}
	if b.Bills, err = queryBills(ctx, q, db, billSelect+` WHERE b.billing_id = ? ORDER BY b.number`, b.ID); err != nil {
		return nil, err
	}
	if b.Bills == nil {
		b.Bills = []*parcela.Bill{}
	}
	return b, nil
}

// Billing returns one of the caller's billings.
func (db *DB) Billing(ctx context.Context, a parcela.Auth, id string) (*parcela.Billing, error) {
	return loadBilling(ctx, db.reader, db, a, id)
}

// CancelBilling cancels an open billing and, since an order cannot be
// finished without it, the order too, with the same reason.
func (db *DB) CancelBilling(ctx context.Context, a parcela.Auth, id, reason string) (*parcela.Billing, error) {
	var b *parcela.Billing
	err := db.inTx(ctx, func(tx *Tx) error {
		cur, err := loadBilling(ctx, tx.q, db, a, id)
		if err != nil {
			return err
		}
		if err := cancelBilling(ctx, tx, a, id, reason); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `UPDATE orders SET status = ?, cancelation_reason = ?, updated_at = ? WHERE id = ? AND status IN (?, ?)`,
			parcela.OrderCanceled, reason, ms64(tx.Now), cur.OrderID, parcela.OrderPending, parcela.OrderInProgress)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			o, err := loadOrder(ctx, tx.q, db, a, cur.OrderID)
			if err != nil {
				return err
			}
			if err := writeEvent(ctx, tx, a.CompanyID, a.Environment, "order", o.ID, "canceled", parcela.NewOrderForm(o, db.links(a.Environment))); err != nil {
				return err
			}
		}
		b, err = loadBilling(ctx, tx.q, db, a, id)
		return err
	})
	return b, err
}
