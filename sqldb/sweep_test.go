package sqldb_test

import (
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// One seller's bill that the bank refuses (a bolepix boleto's Pix code
// needs a merchant name with a Latin letter) does not stop another
// company's bills: each sweep reports the failure, retries it with backoff,
// and never lets the bill turn overdue or accrue a penalty without a
// payment to pay with. Once the cause is fixed, the bill is issued for its
// original amount and is late only after that boleto expires.
func TestNoBillBlocksAnother(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			good, bad := r.company("Escola Boa "+sqldbtest.Suffix()), r.company("Escola Ruim")
			// A name with nothing a Pix code can carry, as a company stored
			// before such names were refused has: its every Pix fails.
			if _, err := r.db.SQLDB().ExecContext(r.ctx, sqldb.Rebind(r.db, `UPDATE companies SET name = ? WHERE id = ?`), "東京音楽学校", bad.CompanyID); err != nil {
				t.Fatal(err)
			}
			goodBilling, badBilling := r.activeBilling(good, 3), r.activeBilling(bad, 3)
			goodBill, badBill := goodBilling.Bills[1], badBilling.Bills[1]
			sweeps := r.app.Sweeps.Only(good.CompanyID, bad.CompanyID)

			issue := func() parcela.SweepReport {
				t.Helper()
				rep, err := sweeps.IssueDueInstallments(r.ctx)
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			wantFailure := func(rep parcela.SweepReport, failures int) {
				t.Helper()
				if len(rep.Failed) != 1 {
					t.Fatalf("failures %+v, want the bad company's bill", rep.Failed)
				}
				f := rep.Failed[0]
				if f.Sweep != parcela.SweepIssueInstallments || f.Row.ID != badBill.ID || f.Row.BillID != badBill.ID ||
					f.Row.Auth != bad || f.Failures != failures || !f.Retry.Equal(r.clock.Now().Add(parcela.SweepBackoff(failures))) {
					t.Fatalf("failure %+v, want bill %s failing for the %d-th time", f, badBill.ID, failures)
				}
				if parcela.ErrorCode(f.Err) != parcela.EUNAVAILABLE {
					t.Fatalf("failure cause %v", f.Err)
				}
			}

			// Inside the issue window of installment 1, the good company's boleto
			// is issued in the same run as the bad one fails.
			r.at(goodBill.DueDate.AddDate(0, 0, -5))
			rep := issue()
			if rep.Moved != 1 {
				t.Fatalf("issued %d, want the good company's installment", rep.Moved)
			}
			wantFailure(rep, 1)
			if b, _ := r.bill(good, goodBill.ID); len(b.Payments) != 1 {
				t.Fatalf("good bill with %d payments", len(b.Payments))
			}
			// The failed bill waits for its backoff, then fails again, waiting longer.
			if rep := issue(); rep.Moved != 0 || len(rep.Failed) != 0 {
				t.Fatalf("a bill in backoff was tried: %+v", rep)
			}
			r.clock.Advance(parcela.SweepBackoff(1))
			wantFailure(issue(), 2)
			if rep := issue(); len(rep.Failed) != 0 {
				t.Fatalf("retried within 4 minutes: %+v", rep)
			}

			// Past the due date: the good company's bill is overdue and fined;
			// the bad one, with nothing to pay with, is neither.
			r.at(goodBill.EffectiveDueDate.Add(24 * time.Hour))
			for _, sweep := range []func() (parcela.SweepReport, error){
				func() (parcela.SweepReport, error) { return sweeps.ExpireDuePayments(r.ctx) },
				func() (parcela.SweepReport, error) { return sweeps.MarkOverdue(r.ctx) },
			} {
				if rep, err := sweep(); err != nil || len(rep.Failed) != 0 {
					t.Fatalf("%+v %v", rep, err)
				}
			}
			wantFailure(issue(), 3)
			if b, c := r.bill(good, goodBill.ID); b.Status != parcela.BillOverdue || b.Penalty(r.clock.Now(), c).FineCents == 0 {
				t.Fatalf("good bill %s, penalty %+v", b.Status, b.Penalty(r.clock.Now(), c))
			}
			if b, c := r.bill(bad, badBill.ID); b.Status != parcela.BillPending || b.Penalty(r.clock.Now(), c) != (parcela.Penalty{}) {
				t.Fatalf("bill without a payment is %s with penalty %+v", b.Status, b.Penalty(r.clock.Now(), c))
			}

			// The operator fixes the name; after the backoff the bill is issued
			// for its original amount, and its failures are forgotten.
			if _, err := r.db.SQLDB().ExecContext(r.ctx, sqldb.Rebind(r.db, `UPDATE companies SET name = ? WHERE id = ?`), "Escola Tokyo", bad.CompanyID); err != nil {
				t.Fatal(err)
			}
			r.clock.Advance(parcela.SweepBackoff(3))
			if rep := issue(); rep.Moved != 1 || len(rep.Failed) != 0 {
				t.Fatalf("after the fix: %+v", rep)
			}
			b, c := r.bill(bad, badBill.ID)
			p := b.Payments[0]
			if p.AmountCents != b.AmountCents || !p.ExpiresAt.After(r.clock.Now().Add(72*time.Hour)) {
				t.Fatalf("late first boleto: %d cents of %d, expires %v", p.AmountCents, b.AmountCents, p.ExpiresAt)
			}
			var left int
			if err := r.db.SQLDB().QueryRowContext(r.ctx, sqldb.Rebind(r.db, `SELECT COUNT(*) FROM sweep_failures WHERE row_id = ?`), badBill.ID).Scan(&left); err != nil || left != 0 {
				t.Fatalf("failure records left: %d %v", left, err)
			}
			// Issued only now, it is not late until that boleto expires.
			if rep, err := sweeps.MarkOverdue(r.ctx); err != nil || rep.Moved != 0 {
				t.Fatalf("marked %+v %v", rep, err)
			}
			if pen := b.Penalty(r.clock.Now(), c); pen != (parcela.Penalty{}) {
				t.Fatalf("penalty before its first boleto expired: %+v", pen)
			}
			r.at(p.ExpiresAt.Add(-time.Millisecond))
			if rep, err := sweeps.MarkOverdue(r.ctx); err != nil || rep.Moved != 0 {
				t.Fatalf("marked %+v %v at the boleto's last settling instant", rep, err)
			}
			r.at(p.ExpiresAt)
			if rep, err := sweeps.MarkOverdue(r.ctx); err != nil || rep.Moved != 1 {
				t.Fatalf("marked %+v %v, want the bill late once its boleto expired", rep, err)
			}
			r.ledger.balanced(t, r.db, good, bad)
		})
	}
}

func TestSweepBackoff(t *testing.T) {
	t.Parallel()
	want := []time.Duration{time.Minute, 4 * time.Minute, 16 * time.Minute, 64 * time.Minute, 256 * time.Minute, 6 * time.Hour, 6 * time.Hour}
	for i, w := range want {
		if got := parcela.SweepBackoff(i + 1); got != w {
			t.Errorf("after %d failures: %v, want %v", i+1, got, w)
		}
	}
	if got := parcela.SweepBackoff(1000); got != 6*time.Hour {
		t.Errorf("after many failures: %v", got)
	}
}

// Each company's installments are selected for issue inside its own
// window, in both environments, and not before: from the first instant of
// the São Paulo day installment_issue_days before the due date, as the
// pages promise ("10 dias antes de cada vencimento"). Counted back from
// the due instant (23:59:59.999), the window opened in that day's last
// millisecond, and the boleto came the day after, 9 days before.
func TestInstallmentsToIssueByCompanyWindow(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			ten := r.company("Escola Dez " + sqldbtest.Suffix())
			twenty := r.company("Escola Vinte " + sqldbtest.Suffix())
			if _, err := r.db.SQLDB().ExecContext(r.ctx, sqldb.Rebind(r.db, `UPDATE companies SET installment_issue_days = 20 WHERE id = ?`), twenty.CompanyID); err != nil {
				t.Fatal(err)
			}
			live := parcela.Auth{CompanyID: twenty.CompanyID, Environment: parcela.Production}
			tenBill, twentyBill, liveBill := r.activeBilling(ten, 3).Bills[1], r.activeBilling(twenty, 3).Bills[1], r.activeBilling(live, 3).Bills[1]
			if !tenBill.DueDate.Equal(twentyBill.DueDate) || !tenBill.DueDate.Equal(liveBill.DueDate) {
				t.Fatalf("due dates %v %v %v", tenBill.DueDate, twentyBill.DueDate, liveBill.DueDate)
			}
			due := tenBill.DueDate
			if want := parcela.EndOfDay(due); !due.Equal(want) {
				t.Fatalf("installment due %v, want the end of its day", due)
			}
			y, m, d := due.In(parcela.SaoPaulo).Date()
			dayBefore := func(n int) time.Time { return parcela.StartOfDay(y, m, d-n) }
			selected := func(at time.Time) map[string]bool {
				t.Helper()
				rows, err := r.db.InstallmentsToIssue(r.ctx, parcela.Due{Now: at, Companies: []string{ten.CompanyID, twenty.CompanyID}, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]bool{}
				for _, row := range rows {
					got[row.BillID] = true
				}
				return got
			}
			for _, c := range []struct {
				at   time.Time
				want []string
			}{
				{dayBefore(20).Add(-time.Millisecond), nil},
				{dayBefore(20), []string{twentyBill.ID, liveBill.ID}},
				{dayBefore(10).Add(-time.Millisecond), []string{twentyBill.ID, liveBill.ID}},
				{dayBefore(10), []string{tenBill.ID, twentyBill.ID, liveBill.ID}},
				{dayBefore(10).Add(12 * time.Hour), []string{tenBill.ID, twentyBill.ID, liveBill.ID}},
			} {
				got := selected(c.at)
				if len(got) != len(c.want) {
					t.Errorf("at %v: selected %v, want %v", c.at, got, c.want)
				}
				for _, id := range c.want {
					if !got[id] {
						t.Errorf("at %v: %s not selected (got %v)", c.at, id, got)
					}
				}
			}
		})
	}
}

// A bill's failures in the issue sweep count those in a row: once a
// payment is issued for the bill another way (the payer's checkout, the
// provider back), they are over. When that payment expires unpaid and the
// provider fails once more, the bill waits a minute, as after a first
// failure: it waited six hours without a boleto, the backoff of the
// earlier outage's sixth failure.
func TestIssueSweepFailuresEndWithAPaymentIssuedMeanwhile(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			a := r.company("Escola Falhas " + sqldbtest.Suffix())
			bill := r.activeBilling(a, 3).Bills[1]
			sweeps := r.app.Sweeps.Only(a.CompanyID)
			down := func(parcela.IssueRequest) error { return parcela.Errorf(parcela.EUNAVAILABLE, "provider down") }
			issue := func() parcela.SweepReport {
				t.Helper()
				rep, err := sweeps.IssueDueInstallments(r.ctx)
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}

			// An outage: the bill fails five times in a row, each retried
			// after its backoff.
			r.at(bill.DueDate.AddDate(0, 0, -5))
			r.ledger.set(down, nil, nil)
			for n := 1; n <= 5; n++ {
				rep := issue()
				if len(rep.Failed) != 1 || rep.Failed[0].Failures != n {
					t.Fatalf("run %d: %+v", n, rep)
				}
				r.clock.Advance(parcela.SweepBackoff(n))
			}
			// The provider is back and the payer asks for a boleto on the
			// checkout before the sweep retries.
			r.clearHooks()
			b, _ := r.bill(a, bill.ID)
			boleto, err := r.app.Checkout.IssuePayment(r.ctx, parcela.Sandbox, b.ID, b.AuthenticationCode, parcela.MethodBoleto)
			if err != nil {
				t.Fatal(err)
			}
			// It expires unpaid while the provider fails again: the expiry
			// stands alone, and the sweep's failure is a first one.
			r.at(boleto.ExpiresAt)
			r.ledger.set(down, nil, nil)
			if rep, err := sweeps.ExpireDuePayments(r.ctx); err != nil || rep.Moved != 1 {
				t.Fatalf("expired %+v %v", rep, err)
			}
			rep := issue()
			if len(rep.Failed) != 1 || rep.Failed[0].Failures != 1 || !rep.Failed[0].Retry.Equal(r.clock.Now().Add(parcela.SweepBackoff(1))) {
				t.Fatalf("failure after a payment was issued meanwhile: %+v, want the first in a row", rep.Failed)
			}
			r.clearHooks()
			r.clock.Advance(parcela.SweepBackoff(1))
			if rep := issue(); rep.Moved != 1 || len(rep.Failed) != 0 {
				t.Fatalf("a minute after a first failure: %+v", rep)
			}
			r.ledger.balanced(t, r.db, a)
		})
	}
}
