package sqldb_test

import (
	"context"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb/sqldbtest"
)

// A waiver whose client leaves once its write committed (a timeout, a
// closed connection) still issues the bill its boleto on the new terms: the
// waiver stands, so the boleto it canceled must be replaced. It was issued
// on the request's context, which had ended, and the bill stayed with
// nothing to pay with until the issue sweep; the retry of the waiver,
// which cancels nothing, issues nothing either.
func TestWaiverWhoseClientLeftIssuesItsBoleto(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			a := r.company("Escola " + sqldbtest.Suffix())
			bill, late, _ := r.lateInstallment(a)

			ctx, leave := context.WithCancel(r.ctx)
			defer leave()
			r.store.crashAfterApply(func(c *parcela.Change) {
				if len(c.Voids) > 0 {
					leave() // the client leaves as the waiver commits
				}
			})
			until := r.clock.Now().AddDate(0, 0, 30)
			_, _, _ = r.app.Bills.WaivePenalties(ctx, a, bill.ID, &until)
			r.clearHooks()

			byBill := r.ledger.balanced(t, r.db, a)
			live := byBill[bill.ID]
			if len(live) != 1 || live[0].Method != parcela.MethodBoleto || live[0].AmountCents != late.AmountCents {
				t.Fatalf("the waived bill's live payments: %v", live)
			}
		})
	}
}

// A waiver is two writes: its change (which cancels the late boleto) and,
// after it commits, the boleto on the new terms. A crash between the two
// leaves the waived bill with nothing to pay with and no intent in flight;
// the installment sweep (which a restart runs at once) issues it, once,
// for the bill's amount without the waived penalty, and a second run
// issues nothing. Held here because only the client's leaving (above) was
// tested between the two writes, not the process's end.
func TestWaiverCrashBeforeItsBoletoIsIssuedBySweep(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, e)
			a := r.company("Escola " + sqldbtest.Suffix())
			bill, late, sweeps := r.lateInstallment(a)

			r.store.crashAfterApply(func(c *parcela.Change) {
				if len(c.Voids) > 0 {
					panic(crash{}) // the waiver committed; its boleto is not issued
				}
			})
			until := r.clock.Now().AddDate(0, 0, 30)
			if !survive(t, func() { _, _, _ = r.app.Bills.WaivePenalties(r.ctx, a, bill.ID, &until) }) {
				t.Fatal("the waiver did not reach the crash")
			}
			r.clearHooks()
			waived, _ := r.bill(a, bill.ID)
			if waived.DisablePenaltiesUntil == nil || !waived.DisablePenaltiesUntil.Equal(until) {
				t.Fatalf("the waiver did not stand: %v", waived.DisablePenaltiesUntil)
			}
			if live := r.ledger.balanced(t, r.db, a)[bill.ID]; len(live) != 0 {
				t.Fatalf("the waived bill's live payments after the crash: %v", live)
			}
			if rep := r.recoverIntents(a); rep.Moved != 0 {
				t.Fatalf("recovery voided %d intents: the crash left none in flight", rep.Moved)
			}
			if rep, err := sweeps.IssueDueInstallments(r.ctx); err != nil || rep.Moved != 1 || len(rep.Failed) != 0 {
				t.Fatalf("issue after the crash: %+v %v", rep, err)
			}
			if rep, err := sweeps.IssueDueInstallments(r.ctx); err != nil || rep.Moved != 0 {
				t.Fatalf("a second run: %+v %v", rep, err)
			}
			live := r.ledger.balanced(t, r.db, a)[bill.ID]
			if len(live) != 1 || live[0].Method != parcela.MethodBoleto || live[0].AmountCents != late.AmountCents {
				t.Fatalf("the waived bill's live payments: %v (bill of %d cents)", live, late.AmountCents)
			}
		})
	}
}

// lateInstallment charges a of a billing of two bills and lets its
// installment's boleto expire unpaid: the one the expiry issues in its
// place is late, priced with the penalty a waiver takes back. It returns
// the installment as charged, as it is now, and a's sweeps.
func (r *lifecycleRig) lateInstallment(a parcela.Auth) (bill, late *parcela.Bill, sweeps *parcela.Sweeps) {
	r.t.Helper()
	bill, sweeps = r.issuedInstallment(a)
	issued, _ := r.bill(a, bill.ID)
	r.at(issued.Payments[0].ExpiresAt.Add(time.Minute))
	if rep, err := sweeps.ExpireDuePayments(r.ctx); err != nil || rep.Moved != 1 {
		r.t.Fatalf("expire: %+v %v", rep, err)
	}
	late, _ = r.bill(a, bill.ID)
	if p := late.Payments[len(late.Payments)-1]; p.Status != parcela.PaymentUnpaid || p.AmountCents <= late.AmountCents {
		r.t.Fatalf("late boleto %s of %d cents for a bill of %d", p.Status, p.AmountCents, late.AmountCents)
	}
	return bill, late, sweeps
}

// issuedInstallment charges a of a billing of two bills and issues its
// installment's boleto by the installment sweep, five days before its due
// date. It returns the installment as charged and a's sweeps.
func (r *lifecycleRig) issuedInstallment(a parcela.Auth) (*parcela.Bill, *parcela.Sweeps) {
	r.t.Helper()
	bill := r.activeBilling(a, 2).Bills[1]
	r.at(bill.DueDate.AddDate(0, 0, -5))
	sweeps := r.app.Sweeps.Only(a.CompanyID)
	if rep, err := sweeps.IssueDueInstallments(r.ctx); err != nil || rep.Moved != 1 {
		r.t.Fatalf("issue: %+v %v", rep, err)
	}
	return bill, sweeps
}
