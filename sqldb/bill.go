package sqldb

import (
	"context"
	"strings"
	"time"

	"parcela"
)

// Bill returns one of the caller's bills with its payments and billing
// summary, and the company whose rates price its penalties.
func (db *DB) Bill(ctx context.Context, a parcela.Auth, id string) (*parcela.Bill, *parcela.Company, error) {
	return loadBill(ctx, db.reader, db, a, id)
}

// BillFilter selects bills; zero values do not filter. Dates are São Paulo
// calendar days, inclusive.
type BillFilter struct {
	BillingID, OrderID, Status string
	DueFrom, DueTo             *time.Time // midnight of the first day, midnight after the last
	PaidFrom, PaidTo           *time.Time
	Page, PerPage              int
}

// ListBills returns a page of the caller's bills ordered by due date then id,
// each with its payments and billing summary, and the total count.
func (db *DB) ListBills(ctx context.Context, a parcela.Auth, f BillFilter) ([]*parcela.Bill, int, *parcela.Company, error) {
	cond, args := billListWhere(a, f)
	total, err := db.countBills(ctx, f, cond, args)
	if err != nil {
		return nil, 0, nil, err
	}
	c, err := companyRates(ctx, db.reader, db, a.CompanyID)
	if err != nil {
		return nil, 0, nil, err
	}
	if (f.Page-1)*f.PerPage >= total {
		return []*parcela.Bill{}, total, c, nil
	}
	bills, err := queryBillsWithBilling(ctx, db, billListSelect+cond+billListOrder, append(args, f.PerPage, (f.Page-1)*f.PerPage)...)
	if err != nil {
		return nil, 0, nil, err
	}
	return bills, total, c, nil
}

// billAndBillingColumns are a bill's columns followed by its billing's (bl).
var billAndBillingColumns = billColumns + `, ` + prefixed("bl.", billingColumns)

// billListSelect reads each bill with its billing summary in one joined row.
var billListSelect = `SELECT ` + billAndBillingColumns + ` FROM bills b JOIN billings bl ON bl.id = b.billing_id WHERE `

// queryBillsWithBilling reads bills joined with their billing, then their payments.
func queryBillsWithBilling(ctx context.Context, db *DB, query string, args ...any) ([]*parcela.Bill, error) {
	rows, err := db.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var bills []*parcela.Bill
	for rows.Next() {
		bl := new(parcela.Billing)
		tail, finish := billingFields(bl)
		b, err := scanBill(withTail{rows, tail})
		if err != nil {
			rows.Close()
			return nil, err
		}
		finish()
		b.Billing, b.Payments = bl, []*parcela.Payment{}
		bills = append(bills, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return bills, attachPayments(ctx, db.reader, db, bills)
}

const billListOrder = ` ORDER BY b.due_date, b.id LIMIT ? OFFSET ?`

// billListWhere builds the filter of a bill listing. Every combination is
// served by an index (see TestBillListingUsesIndexes).
func billListWhere(a parcela.Auth, f BillFilter) (string, []any) {
	where := []string{"b.company_id = ?", "b.environment = ?"}
	args := []any{a.CompanyID, string(a.Environment)}
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if f.BillingID != "" {
		add("b.billing_id = ?", f.BillingID)
	}
	if f.OrderID != "" {
		add("b.order_id = ?", f.OrderID)
	}
	if f.Status != "" {
		add("b.status = ?", f.Status)
	}
	if f.DueFrom != nil {
		add("b.due_date >= ?", ms64(*f.DueFrom))
	}
	if f.DueTo != nil {
		add("b.due_date < ?", ms64(*f.DueTo))
	}
	if f.PaidFrom != nil {
		add("b.paid_at >= ?", ms64(*f.PaidFrom))
	}
	if f.PaidTo != nil {
		add("b.paid_at < ?", ms64(*f.PaidTo))
	}
	return strings.Join(where, " AND "), args
}

// SetPenaltyWaiver sets or clears disable_penalties_until on an open bill.
func (db *DB) SetPenaltyWaiver(ctx context.Context, a parcela.Auth, id string, until *time.Time) error {
	return db.inTx(ctx, func(tx *Tx) error {
		b, _, err := loadBill(ctx, tx.q, db, a, id)
		if err != nil {
			return err
		}
		if b.Status != parcela.BillPending && b.Status != parcela.BillOverdue {
			return parcela.Errorf(parcela.EINVALIDSTATE, "bill is %s; penalties can only be waived on a pending or overdue bill", b.Status)
		}
		_, err = tx.exec(ctx, `UPDATE bills SET disable_penalties_until = ?, updated_at = ? WHERE id = ?`, msPtr(until), ms64(tx.Now), id)
		return err
	})
}
