package sqldb

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"parcela"
)

// A bill response is one statement: the bill, its billing, its company's
// rates and its payments, LEFT JOINed so that a bill has one row per
// payment (or one row with NULL payment columns). On PostgreSQL that is one
// round trip instead of two; on SQLite one statement fewer to run.

// paymentColumnCount counts them by their commas: a column written as an
// expression with commas would make every bill read fail its scan, loudly.
var paymentColumnCount = strings.Count(paymentColumns, ",") + 1

// billRowsSelect reads a bill with its company's rates and payment expiry
// (joined by billRowsJoins); billPageSelect reads a listing's, whose count
// brought them already (joined by billPageJoins). The expiry prices a
// late installment's Pix (Bill.pricedAt), and so what a bill it paid owed.
var (
	billRowsSelect = `SELECT ` + pack(billColumns+`, `+billingColumns+`, c.fine_rate, c.monthly_interest_rate, c.payment_expiry_hours, `+paymentColumns)
	billPageSelect = `SELECT ` + pack(billColumns+`, `+billingColumns+`, `+paymentColumns)
)

const (
	billRowsJoins = `JOIN billings bl ON bl.id = b.billing_id JOIN companies c ON c.id = b.company_id
	LEFT JOIN payments p ON p.bill_id = b.id`
	billPageJoins = `JOIN billings bl ON bl.id = b.billing_id LEFT JOIN payments p ON p.bill_id = b.id`
)

// collectBillRows reads bills with billRowsSelect (withRates) or
// billPageSelect, each bill's rows together, and returns the bills in that
// order, each with its payments oldest first, and, withRates, the rates of
// their company (one company: every query filters on it). The payments are
// ordered here, not by the query: an ORDER BY on them made SQLite copy
// every joined row through a sorter, which cost more than the statement it
// saved.
func collectBillRows(ctx context.Context, r runner, withRates bool, q string, args ...any) ([]*parcela.Bill, *parcela.Company, error) {
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	c := newBillRows(withRates)
	if err := scanEach(rows, c.scan); err != nil {
		return nil, nil, err
	}
	bills, rc := c.result()
	return bills, rc, nil
}

// billRows gathers collectBillRows' rows one at a time (scan), so that a
// pipeline can read them too.
type billRows struct {
	withRates bool
	bills     []*parcela.Bill
	c         *parcela.Company
	pay       rawRow
	payDests  []any
}

func newBillRows(withRates bool) *billRows {
	pay := make(rawRow, paymentColumnCount)
	return &billRows{withRates: withRates, pay: pay, payDests: pay.dests()}
}

func (r *billRows) scan(rows rowScanner) error {
	b, bl, rc := new(parcela.Bill), new(parcela.Billing), new(parcela.Company)
	dests, finishBill := billFields(b)
	billingDests, finishBilling := billingFields(bl)
	dests = append(dests, billingDests...)
	if r.withRates {
		dests = append(dests, rate(&rc.FineRate), rate(&rc.MonthlyInterestRate), &rc.PaymentExpiryHours)
	}
	if err := rows.Scan(append(dests, r.payDests...)...); err != nil {
		return err
	}
	// A bill's later rows repeat it for its next payments.
	if n := len(r.bills); n == 0 || r.bills[n-1].ID != b.ID {
		finishBill()
		finishBilling()
		b.Billing = bl
		r.bills = append(r.bills, b)
		if r.withRates && r.c == nil {
			rc.ID = b.CompanyID
			r.c = rc
		}
	}
	if r.pay[0] == nil {
		return nil
	}
	p, err := scanPayment(r.pay)
	if err != nil {
		return err
	}
	last := r.bills[len(r.bills)-1]
	last.Payments = append(last.Payments, p)
	return nil
}

// result is the bills read, each with its payments oldest first, and
// their company's rates (withRates).
func (r *billRows) result() ([]*parcela.Bill, *parcela.Company) {
	for _, b := range r.bills {
		slices.SortFunc(b.Payments, func(x, y *parcela.Payment) int {
			return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), strings.Compare(x.ID, y.ID))
		})
	}
	return r.bills, r.c
}

// rawRow holds a row's columns as the driver returned them (NULL as nil),
// and scans them again into typed destinations: a payment's columns,
// NULL when the bill has none, go through scanPayment only when present.
type rawRow []any

func (r rawRow) dests() []any {
	d := make([]any, len(r))
	for i := range r {
		d[i] = &r[i]
	}
	return d
}

func (r rawRow) Scan(dests ...any) error {
	if len(dests) != len(r) {
		return fmt.Errorf("sqldb: %d destinations for %d columns", len(dests), len(r))
	}
	for i, d := range dests {
		if err := assign(d, r[i]); err != nil {
			return fmt.Errorf("sqldb: column %d: %w", i, err)
		}
	}
	return nil
}

// assign converts like database/sql's Scan: sql.Null[T] does the
// conversion for the plain destinations. The driver's own types into
// their own kind are assigned directly first: database/sql converts an
// int64 through reflection.
func assign(dest, src any) error {
	switch v := src.(type) {
	case int64:
		switch d := dest.(type) {
		case *int64:
			*d = v
			return nil
		case *int:
			*d = int(v)
			return nil
		case *sql.NullInt64:
			*d = sql.NullInt64{Int64: v, Valid: true}
			return nil
		}
	case int32: // PostgreSQL's INTEGER, through pgx
		switch d := dest.(type) {
		case *int:
			*d = int(v)
			return nil
		case *int64:
			*d = int64(v)
			return nil
		case *sql.NullInt64:
			*d = sql.NullInt64{Int64: int64(v), Valid: true}
			return nil
		}
	case string:
		switch d := dest.(type) {
		case *string:
			*d = v
			return nil
		case *sql.NullString:
			*d = sql.NullString{String: v, Valid: true}
			return nil
		}
	case bool: // PostgreSQL's BOOLEAN, through pgx
		if d, ok := dest.(*bool); ok {
			*d = v
			return nil
		}
	}
	switch d := dest.(type) {
	case sql.Scanner:
		return d.Scan(src)
	case *any: // a rawRow's own place
		*d = src
		return nil
	case *string:
		return assignNotNull(d, src)
	case *int64:
		return assignNotNull(d, src)
	case *int:
		return assignNotNull(d, src)
	case *bool:
		return assignNotNull(d, src)
	}
	return fmt.Errorf("cannot scan into %T", dest)
}

func assignNotNull[T any](d *T, src any) error {
	var n sql.Null[T]
	if err := n.Scan(src); err != nil {
		return err
	}
	if !n.Valid {
		return fmt.Errorf("NULL into %T", d)
	}
	*d = n.V
	return nil
}
