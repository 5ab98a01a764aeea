package sqldb_test

import (
	"testing"
	"time"

	"parcela"
)

// The two other doors that issue a payment, crashed at every step as the
// charge and the installment sweep are (TestChargeCrashAtEveryStep): the
// expiry sweep, whose change expires a boleto and stores its replacement
// together, and the payer's checkout. Either way the recovery voids what
// was issued and not stored, the door run again completes the work, and
// the installment ends with one live boleto, the expired one expired.

func TestExpiryReissueCrashAtEveryStep(t *testing.T) {
	eachCrashPoint(t, func(t *testing.T, r *lifecycleRig, a parcela.Auth, cp crashPoint) {
		bill, sweeps := r.issuedInstallment(a)
		issued, _ := r.bill(a, bill.ID)
		first := issued.Payments[0]
		r.at(first.ExpiresAt.Add(time.Minute))
		cp.set(r)
		if !survive(t, func() { _, _ = sweeps.ExpireDuePayments(r.ctx) }) {
			t.Fatal("the expiry did not reach the crash")
		}
		r.clearHooks()
		if rep := r.recoverIntents(a); (rep.Moved == 1) == cp.stored {
			t.Fatalf("voided %d intents", rep.Moved)
		}
		r.ledger.balanced(t, r.db, a)

		rep, err := sweeps.ExpireDuePayments(r.ctx)
		if err != nil || len(rep.Failed) != 0 || (rep.Moved == 1) == cp.stored {
			t.Fatalf("expiry after the crash: %+v %v", rep, err)
		}
		// Past any backoff, the installment sweep finds nothing missing.
		r.clock.Advance(time.Hour)
		if rep, err := sweeps.IssueDueInstallments(r.ctx); err != nil || rep.Moved != 0 || len(rep.Failed) != 0 {
			t.Fatalf("issue after the expiry: %+v %v", rep, err)
		}
		live := r.ledger.balanced(t, r.db, a)[bill.ID]
		if len(live) != 1 || live[0].ID == first.ID || live[0].Status != parcela.PaymentUnpaid {
			t.Fatalf("installment's live payments %v (expired %s)", live, first.ID)
		}
		after, _ := r.bill(a, bill.ID)
		for _, p := range after.Payments {
			if p.ID == first.ID && p.Status != parcela.PaymentExpired {
				t.Fatalf("the first boleto is %s", p.Status)
			}
		}
	})
}

func TestCheckoutIssueCrashAtEveryStep(t *testing.T) {
	eachCrashPoint(t, func(t *testing.T, r *lifecycleRig, a parcela.Auth, cp crashPoint) {
		bill := r.activeBilling(a, 2).Bills[1]
		r.at(bill.DueDate.AddDate(0, 0, -5))
		payer := func() (*parcela.Payment, error) {
			return r.app.Checkout.IssuePayment(r.ctx, parcela.Sandbox, bill.ID, bill.AuthenticationCode, parcela.MethodBoleto)
		}
		cp.set(r)
		if !survive(t, func() { _, _ = payer() }) {
			t.Fatal("the checkout did not reach the crash")
		}
		r.clearHooks()
		if rep := r.recoverIntents(a); (rep.Moved == 1) == cp.stored {
			t.Fatalf("voided %d intents", rep.Moved)
		}
		r.ledger.balanced(t, r.db, a)

		// The payer asks again: the stored boleto, or one issued now.
		p, err := payer()
		if err != nil {
			t.Fatal(err)
		}
		again, err := payer()
		if err != nil || again.ID != p.ID {
			t.Fatalf("asked again: %v %v, want %s", again, err, p.ID)
		}
		live := r.ledger.balanced(t, r.db, a)[bill.ID]
		if len(live) != 1 || live[0].ID != p.ID {
			t.Fatalf("installment's live payments %v, the payer holds %s", live, p.ID)
		}
	})
}
