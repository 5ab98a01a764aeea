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
			bill := r.activeBilling(a, 2).Bills[1]
			// Its boleto expires unpaid: the one issued in its place is late,
			// priced with the penalty a waiver takes back.
			r.at(bill.DueDate.AddDate(0, 0, -5))
			sweeps := r.app.Sweeps.Only(a.CompanyID)
			if rep, err := sweeps.IssueDueInstallments(r.ctx); err != nil || rep.Moved != 1 {
				t.Fatalf("issue: %+v %v", rep, err)
			}
			issued, _ := r.bill(a, bill.ID)
			r.at(issued.Payments[0].ExpiresAt.Add(time.Minute))
			if rep, err := sweeps.ExpireDuePayments(r.ctx); err != nil || rep.Moved != 1 {
				t.Fatalf("expire: %+v %v", rep, err)
			}
			late, _ := r.bill(a, bill.ID)
			if p := late.Payments[len(late.Payments)-1]; p.Status != parcela.PaymentUnpaid || p.AmountCents <= late.AmountCents {
				t.Fatalf("late boleto %s of %d cents for a bill of %d", p.Status, p.AmountCents, late.AmountCents)
			}

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
