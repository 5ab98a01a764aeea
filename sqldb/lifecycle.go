package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"parcela"
)

// Settlement is a bank's notice that a payment was paid.
type Settlement struct {
	PaidAt          *time.Time // default: now
	PaidAmountCents *int64     // default: the bill's current amount
}

// PayPayment settles a payment as the bank would: the payment and its bill
// become paid, the bill's other open payments are canceled, and the billing
// and order move on (the first bill activates a financed billing and
// finishes an upfront one; the last bill finishes both). Paying a paid
// payment again changes nothing and writes no event.
func (db *DB) PayPayment(ctx context.Context, a parcela.Auth, paymentID string, s Settlement) (string, error) {
	var billID string
	err := db.inTx(ctx, func(tx *Tx) error {
		p, err := scanPayment(tx.queryRow(ctx, paymentSelect+` WHERE p.id = ? AND p.company_id = ? AND p.environment = ?`, paymentID, a.CompanyID, string(a.Environment)))
		if errors.Is(err, sql.ErrNoRows) {
			return parcela.NotFound("payment")
		} else if err != nil {
			return err
		}
		billID = p.BillID
		switch p.Status {
		case parcela.PaymentPaid:
			return nil
		case parcela.PaymentUnpaid:
		default:
			return parcela.Errorf(parcela.EINVALIDSTATE, "payment is %s; only an unpaid payment can be paid", p.Status)
		}
		bill, c, err := loadBill(ctx, tx.q, db, a, p.BillID)
		if err != nil {
			return err
		}
		if bill.Status != parcela.BillPending && bill.Status != parcela.BillOverdue {
			return parcela.Errorf(parcela.EINVALIDSTATE, "bill is %s; it cannot be paid", bill.Status)
		}
		paidAt := tx.Now
		if s.PaidAt != nil {
			paidAt = *s.PaidAt
		}
		amount := bill.Penalty(paidAt, c).Total(bill.AmountCents)
		if s.PaidAmountCents != nil {
			amount = *s.PaidAmountCents
		}
		now := ms64(tx.Now)
		res, err := tx.exec(ctx, `UPDATE payments SET status = ?, paid_amount_cents = ?, paid_at = ?, updated_at = ? WHERE id = ? AND status = ?`,
			parcela.PaymentPaid, amount, ms64(paidAt), now, p.ID, parcela.PaymentUnpaid)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // paid by a racing request: nothing more to do
		}
		if _, err := tx.exec(ctx, `UPDATE payments SET status = ?, updated_at = ? WHERE bill_id = ? AND status = ? AND id <> ?`,
			parcela.PaymentCanceled, now, bill.ID, parcela.PaymentUnpaid, p.ID); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `UPDATE bills SET status = ?, paid_at = ?, updated_at = ? WHERE id = ?`, parcela.BillPaid, ms64(paidAt), now, bill.ID); err != nil {
			return err
		}
		f, err := billForm(ctx, tx, a, bill.ID)
		if err != nil {
			return err
		}
		if err := writeEvent(ctx, tx, a.CompanyID, a.Environment, "bill", bill.ID, "paid", f); err != nil {
			return err
		}
		return advanceBilling(ctx, tx, a, bill.Billing)
	})
	return billID, err
}

// advanceBilling moves a billing (and its order) after one of its bills was paid.
func advanceBilling(ctx context.Context, tx *Tx, a parcela.Auth, b *parcela.Billing) error {
	var open int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM bills WHERE billing_id = ? AND status IN (?, ?)`, b.ID, parcela.BillPending, parcela.BillOverdue).Scan(&open); err != nil {
		return err
	}
	now := ms64(tx.Now)
	if open == 0 {
		if b.Status == parcela.BillingWaitingPayment {
			// A financed billing passes through active on its way to finished.
			if err := moveBilling(ctx, tx, a, b.ID, parcela.BillingWaitingPayment, parcela.BillingActive, b.Installments > 1); err != nil {
				return err
			}
		}
		if _, err := tx.exec(ctx, `UPDATE billings SET status = ?, finished_at = ?, updated_at = ? WHERE id = ?`, parcela.BillingFinished, now, now, b.ID); err != nil {
			return err
		}
		if err := writeBillingEvent(ctx, tx, a, b.ID, "finished"); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `UPDATE orders SET status = ?, updated_at = ? WHERE id = ? AND status = ?`, parcela.OrderFinished, now, b.OrderID, parcela.OrderInProgress)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			o, err := loadOrder(ctx, tx.q, tx.db, a, b.OrderID)
			if err != nil {
				return err
			}
			return writeEvent(ctx, tx, a.CompanyID, a.Environment, "order", o.ID, "finished", parcela.NewOrderForm(o, tx.db.links(a.Environment)))
		}
		return nil
	}
	if b.Status == parcela.BillingWaitingPayment {
		return moveBilling(ctx, tx, a, b.ID, parcela.BillingWaitingPayment, parcela.BillingActive, true)
	}
	return nil
}

func moveBilling(ctx context.Context, tx *Tx, a parcela.Auth, id, from, to string, event bool) error {
	if _, err := tx.exec(ctx, `UPDATE billings SET status = ?, updated_at = ? WHERE id = ? AND status = ?`, to, ms64(tx.Now), id, from); err != nil {
		return err
	}
	if !event {
		return nil
	}
	return writeBillingEvent(ctx, tx, a, id, to)
}

// ExpirePayment expires an unpaid payment. An expired down payment cancels
// its billing (down_payment_not_paid) and order (expired); an expired
// installment boleto is re-issued and its bill stays open.
func (db *DB) ExpirePayment(ctx context.Context, a parcela.Auth, paymentID string) (string, error) {
	nosso, err := db.NextNossoNumero(ctx)
	if err != nil {
		return "", err
	}
	var billID string
	err = db.inTx(ctx, func(tx *Tx) error {
		var err error
		billID, err = expirePayment(ctx, tx, a, paymentID, nosso)
		return err
	})
	return billID, err
}

func expirePayment(ctx context.Context, tx *Tx, a parcela.Auth, paymentID string, nosso int64) (string, error) {
	p, err := scanPayment(tx.queryRow(ctx, paymentSelect+` WHERE p.id = ? AND p.company_id = ? AND p.environment = ?`, paymentID, a.CompanyID, string(a.Environment)))
	if errors.Is(err, sql.ErrNoRows) {
		return "", parcela.NotFound("payment")
	} else if err != nil {
		return "", err
	}
	if p.Status != parcela.PaymentUnpaid {
		return p.BillID, parcela.Errorf(parcela.EINVALIDSTATE, "payment is %s; only an unpaid payment can expire", p.Status)
	}
	if _, err := tx.exec(ctx, `UPDATE payments SET status = ?, updated_at = ? WHERE id = ?`, parcela.PaymentExpired, ms64(tx.Now), p.ID); err != nil {
		return "", err
	}
	bill, _, err := loadBill(ctx, tx.q, tx.db, a, p.BillID)
	if err != nil {
		return "", err
	}
	if bill.Status != parcela.BillPending && bill.Status != parcela.BillOverdue {
		return bill.ID, nil
	}
	if bill.Type == parcela.BillTypeDownPayment && bill.Billing.Status == parcela.BillingWaitingPayment {
		if err := cancelBilling(ctx, tx, a, bill.BillingID, "down_payment_not_paid"); err != nil {
			return "", err
		}
		res, err := tx.exec(ctx, `UPDATE orders SET status = ?, cancelation_reason = ?, updated_at = ? WHERE id = ? AND status = ?`,
			parcela.OrderCanceled, parcela.ReasonExpired, ms64(tx.Now), bill.OrderID, parcela.OrderInProgress)
		if err != nil {
			return "", err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			o, err := loadOrder(ctx, tx.q, tx.db, a, bill.OrderID)
			if err != nil {
				return "", err
			}
			return bill.ID, writeEvent(ctx, tx, a.CompanyID, a.Environment, "order", o.ID, "canceled", parcela.NewOrderForm(o, tx.db.links(a.Environment)))
		}
		return bill.ID, nil
	}
	// An installment keeps its bill open: issue a fresh boleto.
	c, err := companyByID(ctx, tx.q, tx.db, a.CompanyID)
	if err != nil {
		return "", err
	}
	_, err = issueInstallment(ctx, tx, c, bill, nosso)
	return bill.ID, err
}

// issueInstallment issues the boleto (with a Pix code for bolepix) of an
// installment bill. It expires at the bill's due date, or, for a bill
// already due, after the company's payment expiry from now.
func issueInstallment(ctx context.Context, tx *Tx, c *parcela.Company, bill *parcela.Bill, nosso int64) (*parcela.Payment, error) {
	pc, err := configurationByID(ctx, tx.q, tx.db, bill.Billing.PaymentConfigurationID)
	if err != nil {
		return nil, err
	}
	expires := bill.EffectiveDueDate
	if min := tx.Now.Add(time.Duration(c.PaymentExpiryHours) * time.Hour); expires.Before(min) {
		expires = min
	}
	withPix := pc.FinancedType != nil && *pc.FinancedType == "bolepix"
	amount := bill.Penalty(tx.Now, c).Total(bill.AmountCents)
	issued := *bill
	issued.AmountCents = amount
	return issuePayment(ctx, tx, c, &issued, parcela.MethodBoleto, expires, nosso, withPix)
}
