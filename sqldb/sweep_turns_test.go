package sqldb_test

import (
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// Every sweep's batch takes the companies' due rows in turns: each
// company's first row, then each one's second, and so on. In due order
// across all companies, a company's backlog (installments to issue after
// an outage, each a provider call) filled batch after batch, and every
// other company's rows, due after it, waited until it was done.
//
// A company's sandbox and production take turns of their own, as two
// companies do: taken in turns by company alone, a company's sandbox
// backlog (a load test's installments) held its production rows, due
// after it, for as long as it lasted.
func TestSweepBatchesTakeCompaniesInTurns(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			backlog, few := r.company("Escola Atrasada "+sqldbtest.Suffix()), r.company("Escola em Dia "+sqldbtest.Suffix())
			sweepTurns(t, r, backlog, few)
		})
		t.Run(string(e)+"/environments", func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			backlog := r.company("Escola com Testes " + sqldbtest.Suffix())
			few := parcela.Auth{CompanyID: backlog.CompanyID, Environment: parcela.Production}
			sweepTurns(t, r, backlog, few)
		})
	}
}

// sweepTurns checks that every sweep's batch holds few's one due row
// beside backlog's older ones.
func sweepTurns(t *testing.T, r *lifecycleRig, backlog, few parcela.Auth) {
	const batch = 3 // A's backlog of 4 or more rows fills it, in due order
	companies := []string{backlog.CompanyID}
	if few.CompanyID != backlog.CompanyID {
		companies = append(companies, few.CompanyID)
	}
	owner := func(a parcela.Auth) string { return a.CompanyID + "/" + string(a.Environment) }
	inBatch := func(name string, rows []parcela.DueRow, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, row := range rows {
			seen[owner(row.Auth)]++
		}
		if len(rows) != batch || seen[owner(few)] != 1 {
			t.Errorf("%s: a batch of %d rows holds %d of the company with one due, %d of the backlog's", name, len(rows),
				seen[owner(few)], seen[owner(backlog)])
		}
	}

	// First bills with nothing to pay them (their boletos canceled),
	// the backlog's due first.
	lapse := func(a parcela.Auth) {
		offer, o := r.pendingOrder(a)
		o, err := r.charge(a, offer, o, parcela.MethodBoleto, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.db.SQLDB().ExecContext(r.ctx, sqldb.Rebind(r.db, `UPDATE payments SET status = 'canceled' WHERE bill_id = ?`),
			o.Billings[0].Bills[0].ID); err != nil {
			t.Fatal(err)
		}
	}
	for range batch + 1 {
		lapse(backlog)
	}
	r.clock.Advance(24 * time.Hour)
	lapse(few)

	// Installments to issue: the backlog's six, from a month on,
	// the other company's one, due four months later.
	r.activeBilling(backlog, 7)
	r.clock.Advance(4 * 31 * 24 * time.Hour)
	fewBill := r.activeBilling(few, 2).Bills[1]
	issueAt := fewBill.DueDate.Add(24 * time.Hour)
	rows, err := r.db.LapsedFirstBills(r.ctx, parcela.Due{Now: issueAt, Companies: companies, Limit: batch})
	inBatch("lapsed first bills", rows, err)
	rows, err = r.db.InstallmentsToIssue(r.ctx, parcela.Due{Now: issueAt, Companies: companies, Limit: batch})
	inBatch("installments to issue", rows, err)

	// Issued a day apart, the backlog's first: their boletos expire
	// in that order, unpaid, and their installments are late.
	r.at(issueAt)
	issuers := []parcela.Auth{backlog, few}
	if few.CompanyID == backlog.CompanyID {
		issuers = issuers[:1] // one sweep of the company issues both environments'
	}
	for _, a := range issuers {
		if rep, err := r.app.Sweeps.Only(a.CompanyID).IssueDueInstallments(r.ctx); err != nil || rep.Moved == 0 || len(rep.Failed) != 0 {
			t.Fatalf("issue: %+v %v", rep, err)
		}
		r.clock.Advance(24 * time.Hour)
	}
	late := r.clock.Now().Add(60 * 24 * time.Hour)
	rows, err = r.db.ExpiredPayments(r.ctx, parcela.Due{Now: late, Companies: companies, Limit: batch})
	inBatch("expired payments", rows, err)
	rows, err = r.db.LateInstallments(r.ctx, parcela.Due{Now: late, Companies: companies, Limit: batch})
	inBatch("late installments", rows, err)

	// Intents whose issuer stopped, the backlog's first.
	r.ledger.set(func(parcela.IssueRequest) error { panic(crash{}) }, nil, nil)
	stop := func(a parcela.Auth) {
		offer, o := r.pendingOrder(a)
		if !survive(t, func() { _, _ = r.charge(a, offer, o, parcela.MethodPix, 2) }) {
			t.Fatal("the charge did not stop")
		}
	}
	for range batch + 1 {
		stop(backlog)
	}
	r.clock.Advance(time.Minute)
	stop(few)
	r.clearHooks()
	now := r.clock.Now().Add(parcela.IntentTimeout + time.Minute)
	rows, err = r.db.StaleIntents(r.ctx, parcela.Due{Now: now, Companies: companies, Limit: batch}, now.Add(-parcela.IntentTimeout))
	inBatch("stale intents", rows, err)
}
