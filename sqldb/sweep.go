package sqldb

import (
	"context"
	"time"

	"parcela"
)

// The sweeps' selections. They read on a reader: on SQLite the writer is one
// connection, and a selection over a million bills held it, and every
// charge behind it, for most of a second. Each selected row is read and
// decided again before it moves.
//
// A row the sweep failed on has a record in sweep_failures; it is left out
// until its retry time, and selected with its count of failures.

// failuresOf joins a selected row (alias.column) to its failure record.
func failuresOf(row string) string {
	return ` LEFT JOIN sweep_failures f ON f.sweep = ? AND f.row_id = ` + row
}

// retryDue leaves out the rows whose failure record's retry is still to come.
const retryDue = ` AND (f.next_attempt_at IS NULL OR f.next_attempt_at <= ?)`

// scope limits a selection to the companies d names, if any (tests sharing
// a database name theirs), and returns the condition's arguments.
func scope(alias string, d parcela.Due) (string, []any) {
	if len(d.Companies) == 0 {
		return "", nil
	}
	args := make([]any, len(d.Companies))
	for i, id := range d.Companies {
		args[i] = id
	}
	return ` AND ` + alias + `.company_id IN (` + placeholders(len(args)) + `)`, args
}

// The bill selections walk the companies (SQLite keeps a CROSS JOIN's order)
// and read bills_status_due from (company, environment, status) up to a
// due date, so no sweep reads the bills of every company, and the bills
// need no index of their own for the sweeps.
const (
	companyBills  = `companies c CROSS JOIN bills b`
	ofEachCompany = `b.company_id = c.id AND b.environment IN ('` + string(parcela.Sandbox) + `', '` + string(parcela.Production) + `')`
)

// args joins a selection's arguments around its scope's.
func args(sweep string, scoped []any, rest ...any) []any {
	return append(append([]any{sweep}, scoped...), rest...)
}

// inTurns selects a sweep's batch from its due rows (selected, each with
// its company_id, environment and its due time as due_at) in turns between
// companies, each environment of a company taking turns of its own: every
// company's first row by due_at, then every one's second, and so on.
// In due order alone, one company's backlog (installments to issue after
// an outage, each a provider call) filled batch after batch while every
// other company's rows, due after it, waited; and in turns by company
// alone, a company's sandbox backlog (a load test's) held its production
// rows. The turns are numbered over
// the due rows the selection reads through its index, as before: a batch
// reads and sorts all of them (the bill sweeps did already), not the first
// Limit alone.
func inTurns(selected string) string {
	return `SELECT id, company_id, environment, bill_id, failures FROM (SELECT due.*,
		ROW_NUMBER() OVER (PARTITION BY due.company_id, due.environment ORDER BY due.due_at, due.id) AS turn FROM (` + selected + `) due) turns
		ORDER BY turn, due_at, id LIMIT ?`
}

func scanDueRow(row rowScanner) (parcela.DueRow, error) {
	var r parcela.DueRow
	var env string
	err := row.Scan(&r.ID, &r.Auth.CompanyID, &env, &r.BillID, &r.Failures)
	r.Auth.Environment = parcela.Environment(env)
	return r, err
}

// ExpiredPayments selects unpaid payments whose expiry has come: a Pix's
// once the bank's notice grace has passed too (parcela.PixNoticeGrace), a
// first bill's boleto once its notice has surely come
// (parcela.BoletoNoticeDeadline, by parcela.BoletoNoticeCutoff).
func (db *DB) ExpiredPayments(ctx context.Context, d parcela.Due) ([]parcela.DueRow, error) {
	q, args := expiredPayments(d)
	out, err := collect(ctx, db.reader, scanDueRow, q, args...)
	return out, failed("select expired payments", err)
}

// expiredPayments is ExpiredPayments' selection, through
// payments_open_expiry.
func expiredPayments(d parcela.Due) (string, []any) {
	now := ms64(d.Now)
	company, scoped := scope("p", d)
	return inTurns(`SELECT p.id, p.company_id, p.environment, p.bill_id, COALESCE(f.failures, 0) AS failures, p.expires_at AS due_at
		FROM payments p` + failuresOf("p.id") + `
		WHERE p.status = 'unpaid'` + company + ` AND p.expires_at <= ? AND (p.payment_method <> 'pix' OR p.expires_at <= ?)
		AND (p.payment_method <> 'boleto' OR p.expires_at <= ?
			OR NOT EXISTS (SELECT 1 FROM bills b WHERE b.id = p.bill_id AND b.bill_type = 'down_payment'))` + retryDue),
		args(parcela.SweepExpirePayments, scoped, now, ms64(d.Now.Add(-parcela.PixNoticeGrace)), ms64(parcela.BoletoNoticeCutoff(d.Now)), now, d.Limit)
}

// LateInstallments selects pending installments of active billings past
// their effective due date and their waiver (disable_penalties_until) with
// an unpaid payment, leaving out those whose
// first Pix or boleto (card attempts are none) was issued after that date
// and has not expired yet (they are late from its expiry, as
// Bill.lateFrom).
func (db *DB) LateInstallments(ctx context.Context, d parcela.Due) ([]parcela.DueRow, error) {
	q, args := lateInstallments(d)
	out, err := collect(ctx, db.reader, scanDueRow, q, args...)
	return out, failed("select late installments", err)
}

// lateInstallments is LateInstallments' selection, over each company's
// pending bills due by now (a bill's effective due date is never before
// its due date).
func lateInstallments(d parcela.Due) (string, []any) {
	now := ms64(d.Now)
	company, scoped := scope("b", d)
	return inTurns(`SELECT b.id, b.company_id, b.environment, b.id AS bill_id, COALESCE(f.failures, 0) AS failures, b.effective_due_date AS due_at
		FROM ` + companyBills + ` JOIN billings bl ON bl.id = b.billing_id` + failuresOf("b.id") + `
		WHERE ` + ofEachCompany + ` AND b.status = 'pending'` + company + ` AND b.due_date <= ? AND b.effective_due_date < ?
		AND b.bill_type = 'installment' AND bl.status = 'active'
		AND (b.disable_penalties_until IS NULL OR b.disable_penalties_until <= ?)
		AND EXISTS (SELECT 1 FROM payments p WHERE p.bill_id = b.id AND p.status = 'unpaid')
		AND NOT EXISTS (SELECT 1 FROM payments p0 WHERE p0.bill_id = b.id AND p0.payment_method <> 'credit_card'
			AND p0.created_at > b.effective_due_date AND p0.expires_at > ?
			AND p0.created_at = (SELECT MIN(p1.created_at) FROM payments p1 WHERE p1.bill_id = b.id AND p1.payment_method <> 'credit_card'))` + retryDue),
		args(parcela.SweepMarkOverdue, scoped, now, now, now, now, now, d.Limit)
}

// InstallmentsToIssue selects open installments of active billings inside
// their company's issue window with no live payment.
func (db *DB) InstallmentsToIssue(ctx context.Context, d parcela.Due) ([]parcela.DueRow, error) {
	q, args := installmentsToIssue(d)
	out, err := collect(ctx, db.reader, scanDueRow, q, args...)
	return out, failed("select installments to issue", err)
}

// installmentsToIssue is InstallmentsToIssue's selection, up to each
// company's own window end: as one condition on all bills it read the whole
// table (a second of CPU every run at a million bills). The window is
// multiplied in 64 bits: days × 86,400,000 ms passes 32 bits at 25 days.
// It opens on the São Paulo day installment_issue_days before the due date
// (its bills are due at that day's end): counted from now, not from the
// end of now's day, it opened in that day's last millisecond, and the
// boleto the pages promise "10 dias antes de cada vencimento" came 9. A
// window holding the end of daylight saving has a 25-hour day, so the
// selection reaches parcela.IssueWindowSlack further and the issue checks
// the calendar window (parcela.Company.InIssueWindow).
//
// A bill's failure record counts only if no payment was issued for it
// since (payments_bill): one issued another way (the payer's checkout,
// the expiry's re-issue) ended the failures in a row, and one failure
// after it expired waited the earlier outage's backoff, up to six hours.
func installmentsToIssue(d parcela.Due) (string, []any) {
	now := ms64(d.Now)
	company, scoped := scope("b", d)
	return inTurns(`SELECT b.id, b.company_id, b.environment, b.id AS bill_id, COALESCE(f.failures, 0) AS failures, b.due_date AS due_at
		FROM ` + companyBills + ` JOIN billings bl ON bl.id = b.billing_id` + failuresOf("b.id") + `
			AND f.failed_at > COALESCE((SELECT MAX(pi.created_at) FROM payments pi WHERE pi.bill_id = b.id), 0)
		WHERE ` + ofEachCompany + ` AND b.status IN ('pending', 'overdue')` + company + ` AND b.bill_type = 'installment' AND bl.status = 'active'
		AND b.due_date <= CAST(? AS BIGINT) + CAST(c.installment_issue_days AS BIGINT) * 86400000
		AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.bill_id = b.id AND p.status IN ('unpaid', 'paid'))` + retryDue),
		args(parcela.SweepIssueInstallments, scoped, ms64(parcela.EndOfDay(d.Now).Add(parcela.IssueWindowSlack)), now, d.Limit)
}

// StaleIntents selects intents issuing or voiding, untouched since before
// before.
func (db *DB) StaleIntents(ctx context.Context, d parcela.Due, before time.Time) ([]parcela.DueRow, error) {
	q, args := staleIntents(d, before)
	out, err := collect(ctx, db.reader, scanDueRow, q, args...)
	return out, failed("select stale payment intents", err)
}

// staleIntents is StaleIntents' selection, through payment_intents_open.
func staleIntents(d parcela.Due, before time.Time) (string, []any) {
	company, scoped := scope("i", d)
	return inTurns(`SELECT i.id, i.company_id, i.environment, i.bill_id, COALESCE(f.failures, 0) AS failures, i.updated_at AS due_at
		FROM payment_intents i` + failuresOf("i.id") + `
		WHERE i.state IN ('issuing', 'voiding')` + company + ` AND i.updated_at < ?` + retryDue),
		args(parcela.SweepRecoverIntents, scoped, ms64(before), ms64(d.Now), d.Limit)
}

// RecordSweepFailure records a row's latest failure in a sweep and when to
// retry it.
func (db *DB) RecordSweepFailure(ctx context.Context, f parcela.SweepFailure) error {
	return failed("record sweep failure", db.inTx(ctx, func(tx *Tx) error {
		_, err := tx.r.exec(ctx, `INSERT INTO sweep_failures (sweep, row_id, company_id, environment, bill_id, failures, next_attempt_at, failed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sweep, row_id) DO UPDATE SET failures = excluded.failures,
			next_attempt_at = excluded.next_attempt_at, failed_at = excluded.failed_at`,
			f.Sweep, f.Row.ID, f.Row.Auth.CompanyID, string(f.Row.Auth.Environment), f.Row.BillID, f.Failures, ms64(f.Retry), ms64(db.clock.Now()))
		return err
	}))
}

// ClearSweepFailure deletes a row's failure record in a sweep.
func (db *DB) ClearSweepFailure(ctx context.Context, sweep, id string) error {
	return failed("clear sweep failure", db.inTx(ctx, func(tx *Tx) error {
		_, err := tx.r.exec(ctx, `DELETE FROM sweep_failures WHERE sweep = ? AND row_id = ?`, sweep, id)
		return err
	}))
}

// LapsedFirstBills selects pending first bills of waiting billings past
// their due date with no payment to pay them with (a first bill charged
// for a card: its effective due date is its due date). A bill with an
// unpaid payment is left to the expiry of that payment.
func (db *DB) LapsedFirstBills(ctx context.Context, d parcela.Due) ([]parcela.DueRow, error) {
	q, args := lapsedFirstBills(d)
	out, err := collect(ctx, db.reader, scanDueRow, q, args...)
	return out, failed("select lapsed first bills", err)
}

// lapsedFirstBills is LapsedFirstBills' selection, over each company's
// pending bills due by now.
func lapsedFirstBills(d parcela.Due) (string, []any) {
	now := ms64(d.Now)
	company, scoped := scope("b", d)
	return inTurns(`SELECT b.id, b.company_id, b.environment, b.id AS bill_id, COALESCE(f.failures, 0) AS failures, b.effective_due_date AS due_at
		FROM ` + companyBills + ` JOIN billings bl ON bl.id = b.billing_id` + failuresOf("b.id") + `
		WHERE ` + ofEachCompany + ` AND b.status = 'pending'` + company + ` AND b.due_date <= ? AND b.effective_due_date <= ?
		AND b.bill_type = 'down_payment' AND bl.status = 'waiting_payment'
		AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.bill_id = b.id AND p.status IN ('unpaid', 'paid'))` + retryDue),
		args(parcela.SweepLapseFirstBills, scoped, now, now, now, d.Limit)
}
