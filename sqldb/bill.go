package sqldb

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"parcela"
)

const billColumns = `b.id, b.company_id, b.environment, b.billing_id, b.order_id, b.number, b.bill_type, b.status, b.amount_cents, b.due_date,
	b.effective_due_date, b.disable_penalties_until, b.paid_at, b.authentication_code, b.down_payment_cents, b.registration_fee_cents,
	b.amortization_cents, b.interest_cents, b.created_at, b.updated_at`

// billSelect reads bills, packed (see pack).
const billSelect = `SELECT ` + packOpen + billColumns + `) FROM bills b`

// billFields returns the scan destinations of billColumns and the step
// that converts them once scanned, so a bill can share a row with other
// tables.
func billFields(b *parcela.Bill) ([]any, func()) {
	var env, typ string
	var due, eff, created, updated int64
	var disable, paid sql.NullInt64
	dests := []any{&b.ID, &b.CompanyID, &env, &b.BillingID, &b.OrderID, &b.Number, &typ, &b.Status, &b.AmountCents, &due, &eff, &disable, &paid,
		&b.AuthenticationCode, &b.Details.DownPaymentCents, &b.Details.RegistrationFeeCents, &b.Details.AmortizationCents, &b.Details.InterestCents,
		&created, &updated}
	return dests, func() {
		b.Environment, b.Type = parcela.Environment(env), parcela.BillType(typ)
		b.DueDate, b.EffectiveDueDate = fromMS(due), fromMS(eff)
		b.DisablePenaltiesUntil, b.PaidAt = fromNullMS(disable), fromNullMS(paid)
		b.CreatedAt, b.UpdatedAt = fromMS(created), fromMS(updated)
		b.Payments = []*parcela.Payment{}
	}
}

func scanBill(row rowScanner) (*parcela.Bill, error) {
	var b parcela.Bill
	dests, finish := billFields(&b)
	if err := row.Scan(dests...); err != nil {
		return nil, err
	}
	finish()
	return &b, nil
}

// queryBills runs a bills query and attaches each bill's payments.
func queryBills(ctx context.Context, r runner, q string, args ...any) ([]*parcela.Bill, error) {
	bills, err := collect(ctx, r, scanBill, q, args...)
	if err != nil {
		return nil, err
	}
	return bills, attachPayments(ctx, r, bills)
}

// Bill returns one of the caller's bills with its payments and billing
// summary, and the company whose rates price its penalties, in one
// statement (bill_rows.go).
func (db *DB) Bill(ctx context.Context, a parcela.Auth, id string) (*parcela.Bill, *parcela.Company, error) {
	bills, c, err := collectBillRows(ctx, db.reader, true, billRowsSelect+` FROM bills b `+billRowsJoins+`
		WHERE b.id = ? AND b.company_id = ? AND b.environment = ?`, id, a.CompanyID, string(a.Environment))
	if err == nil && len(bills) == 0 {
		err = notFound(sql.ErrNoRows, "bill")
	}
	if err != nil {
		return nil, nil, failed("read bill", err)
	}
	return bills[0], c, nil
}

// Bills returns a page of the caller's bills ordered by due date then id,
// each with its payments and billing summary, and the total count: the
// count with the company's rates and payment expiry, then the page with
// its payments.
//
// On PostgreSQL the page and its payments are one joined statement (one
// round trip fewer). On SQLite the payments come in a second statement,
// by a sorted IN list: probing payments_bill in bill-id order reuses its
// pages, where the join probes it in due-date order, a page-cache miss per
// bill at a million bills (about 10% more CPU per page, measured).
func (db *DB) Bills(ctx context.Context, a parcela.Auth, f parcela.BillFilter) ([]*parcela.Bill, int, *parcela.Company, error) {
	r, done, err := db.reader.billPagesOf(a, f).session(ctx)
	if err != nil {
		return nil, 0, nil, failed("list bills", err)
	}
	defer done()
	l := billListing(db.dialect, a, f)
	c := &parcela.Company{ID: a.CompanyID}
	q, args := l.countAndRatesQuery()
	var total int
	err = r.queryRow(ctx, q, args...).Scan(rate(&c.FineRate), rate(&c.MonthlyInterestRate), &c.PaymentExpiryHours, &total)
	if err != nil {
		return nil, 0, nil, failed("count bills", notFound(err, "company"))
	}
	if (f.Page.Page-1)*f.PerPage >= total {
		return []*parcela.Bill{}, total, c, nil
	}
	args = l.pageArgs(db.dialect, f.PerPage, (f.Page.Page-1)*f.PerPage)
	var bills []*parcela.Bill
	if db.dialect == Postgres {
		bills, _, err = collectBillRows(ctx, r, false, l.pageQuery(Postgres), args...)
	} else if bills, err = collect(ctx, r, scanBillWithBilling, l.pageQuery(SQLite), args...); err == nil {
		err = attachPayments(ctx, r, bills)
	}
	if err != nil {
		return nil, 0, nil, failed("list bills", err)
	}
	// The count and the page are two statements, each with its snapshot:
	// bills charged between them are on the page but not in the count, and
	// a page of 1,000 answered total_items 6 with 12 results. The count is
	// at least what the page shows. (A bill that left a status filter
	// between them, the other way round, is not corrected: the count is one
	// too many until the next request.)
	return bills, atLeastShown(total, f.Page, len(bills)), c, nil
}

// billPagesOf is r for a page of a's bills under f. A page filtered by
// payment date reads every bill paid in the range (bills_paid) and sorts
// them by due date before it takes its page, and counts them all: its first
// page of a range of a million paid bills reads for seconds, as a page a
// million deep does, so it takes its company's turn as deep pages do
// (readGate.turn). Without, one company's wide paid_at ranges, sent a few at
// once, filled the gate and every other company's reads waited behind them.
func (r runner) billPagesOf(a parcela.Auth, f parcela.BillFilter) runner {
	if f.PaidFrom != nil || f.PaidTo != nil {
		return r.byTurns(a)
	}
	return r.pagesOf(a, f.Page)
}

// scanBillWithBilling scans a bill joined with its billing summary.
func scanBillWithBilling(row rowScanner) (*parcela.Bill, error) {
	b, bl := new(parcela.Bill), new(parcela.Billing)
	dests, finishBill := billFields(b)
	billingDests, finishBilling := billingFields(bl)
	if err := row.Scan(append(dests, billingDests...)...); err != nil {
		return nil, err
	}
	finishBill()
	finishBilling()
	b.Billing = bl
	return b, nil
}

// listing is a bill listing's filter, as the conditions on the bills and,
// where the per-day counts can answer the count, on the counts.
type listing struct {
	companyID  string
	bills      string   // the FROM item of bills b, with the index SQLite must read
	cond       []string // on bills b
	args       []any
	countCond  []string // on the count tables, when they can answer: company, environment and status, which are bills b's columns too
	countArgs  []any
	dueFrom    *int64 // the due-date bounds (ms), which the counts answer by day (bill_count.go)
	dueTo      *int64
	countBills bool // the filter names what the counts do not key on
	// byStatus: no filter names a status or what another index keys on,
	// so the page merges each status's bills in bills_status_due order.
	byStatus bool
}

// billListing builds the filter of a bill listing. Every combination is
// served by an index (see TestBillListingUsesIndexes).
func billListing(d Dialect, a parcela.Auth, f parcela.BillFilter) listing {
	l := listing{companyID: a.CompanyID, bills: "bills b", countBills: f.BillingID != "" || f.OrderID != "" || f.PaidFrom != nil || f.PaidTo != nil}
	if d == SQLite {
		l.bills = "bills b INDEXED BY " + sqliteBillIndex(f)
	}
	add := func(bills, counts string, v any) {
		l.cond, l.args = append(l.cond, bills), append(l.args, v)
		if counts != "" {
			l.countCond, l.countArgs = append(l.countCond, counts), append(l.countArgs, v)
		}
	}
	add("b.company_id = ?", "company_id = ?", a.CompanyID)
	add("b.environment = ?", "environment = ?", string(a.Environment))
	if f.BillingID != "" {
		// Through the billing's order, whose index (bills_order) serves
		// the bills of a billing too.
		add("b.order_id = (SELECT order_id FROM billings WHERE id = ?)", "", f.BillingID)
		add("b.billing_id = ?", "", f.BillingID)
	}
	if f.OrderID != "" {
		add("b.order_id = ?", "", f.OrderID)
	}
	if f.Status != "" {
		add("b.status = ?", "status = ?", f.Status)
	}
	if f.DueFrom != nil {
		l.dueFrom = new(ms64(*f.DueFrom))
		add("b.due_date >= ?", "", *l.dueFrom)
	}
	if f.DueTo != nil {
		l.dueTo = new(ms64(*f.DueTo))
		add("b.due_date < ?", "", *l.dueTo)
	}
	if f.PaidFrom != nil {
		add("b.paid_at >= ?", "", ms64(*f.PaidFrom))
	}
	if f.PaidTo != nil {
		add("b.paid_at < ?", "", ms64(*f.PaidTo))
	}
	l.byStatus = f.Status == "" && !l.countBills
	return l
}

// sqliteBillIndex is the index a SQLite listing under f reads, named
// because SQLite plans without statistics: left to itself it took the
// index that holds every column (bills_status_due, migration 00021) for an
// order's dozen bills too, walking a company's whole run of a status
// (TestBillListingReadsTheNarrowestIndex; docs/design.md). For a payment
// date, bills_paid, unless a status and two-sided due dates are named and
// the payment dates are not within an eighth of their span:
// bills_status_due's entries are read in sequence and in the page's order,
// where bills_paid reads a table row per bill and sorts them all.
func sqliteBillIndex(f parcela.BillFilter) string {
	switch {
	case f.BillingID != "" || f.OrderID != "":
		return "bills_order"
	case f.PaidFrom == nil && f.PaidTo == nil:
		return "bills_status_due"
	case f.Status == "" || f.DueFrom == nil || f.DueTo == nil:
		return "bills_paid"
	case f.PaidFrom != nil && f.PaidTo != nil && f.PaidTo.Sub(*f.PaidFrom) < f.DueTo.Sub(*f.DueFrom)/8:
		// Divided, not multiplied: eight times a span of over 36 years
		// overflows a Duration (and Sub saturates at 292 years).
		return "bills_paid"
	}
	return "bills_status_due"
}

func (l listing) where() string { return strings.Join(l.cond, " AND ") }

// pageQuery reads the page's bills in due-date order with their billings,
// and on PostgreSQL their payments joined (collectBillRows); SQLite's are
// read after (attachPayments). Its arguments are pageArgs.
func (l listing) pageQuery(d Dialect) string {
	if d == Postgres {
		return billPageSelect + ` FROM (` + l.pageBills(d) + `) b
		` + billPageJoins + ` ORDER BY b.due_date, b.id`
	}
	if !l.byStatus {
		return `SELECT ` + pack(billColumns+`, `+billingColumns) + ` FROM ` + l.bills + ` JOIN billings bl ON bl.id = b.billing_id
			WHERE ` + l.where() + ` ORDER BY b.due_date, b.id LIMIT ? OFFSET ?`
	}
	return `SELECT ` + pack(billColumns+`, `+billingColumns) + ` FROM (` + l.pageBills(d) + `) b
		JOIN billings bl ON bl.id = b.billing_id ORDER BY b.due_date, b.id`
}

// pageBills selects the page's bills. Without a status it is one SELECT
// per status, each reading its run of bills_status_due in order, and the
// page is cut from their union: no index keyed on the due date alone is
// written for it (migration 00014), and no plan sorts a company's bills.
// SQLite merges the runs of the union (MERGE (UNION ALL)). PostgreSQL 15
// would sort them all, since an arm's equalities on the index's leading
// columns do not make the index's order the union's, so there each arm
// stops at the page's end and only those rows are sorted.
func (l listing) pageBills(d Dialect) string {
	if !l.byStatus {
		return `SELECT ` + billColumns + ` FROM ` + l.bills + ` WHERE ` + l.where() + ` ORDER BY b.due_date, b.id LIMIT ? OFFSET ?`
	}
	arms := make([]string, len(parcela.BillStatuses))
	for i := range arms {
		arms[i] = `SELECT ` + billColumns + ` FROM ` + l.bills + ` WHERE ` + l.where() + ` AND b.status = ?`
		if d == Postgres {
			arms[i] = `SELECT * FROM (` + arms[i] + ` ORDER BY b.due_date, b.id LIMIT ?) s` + strconv.Itoa(i)
		}
	}
	return `SELECT * FROM (` + strings.Join(arms, ` UNION ALL `) + `) u ORDER BY due_date, id LIMIT ? OFFSET ?`
}

// pageArgs are pageQuery's arguments for a page of limit bills after offset.
func (l listing) pageArgs(d Dialect, limit, offset int) []any {
	if !l.byStatus {
		return append(l.args[:len(l.args):len(l.args)], limit, offset)
	}
	args := make([]any, 0, (len(l.args)+2)*len(parcela.BillStatuses)+2)
	for _, s := range parcela.BillStatuses {
		if args = append(append(args, l.args...), s); d == Postgres {
			args = append(args, offset+limit)
		}
	}
	return append(args, limit, offset)
}
