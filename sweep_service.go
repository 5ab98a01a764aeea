package parcela

import (
	"context"
	"time"
)

// sweepBatch bounds the rows a sweep selects at a time, taken in turns
// between companies (the store's selections), so one company's backlog
// does not fill a batch others have due rows for. A run selects batch
// after batch while they come full, for up to sweepRunBudget: with one
// batch a run (a minute apart, ten for the issue sweep), one company's
// backlog of expiries or installments held every other company's rows,
// due after it, for as many runs as the backlog has batches.
const (
	sweepBatch     = 500
	sweepRunBudget = 30 * time.Second // within the sweep job's minute
)

// The sweeps, by the names their failure records, logs and metrics carry.
const (
	SweepExpirePayments    = "expire_payments"
	SweepMarkOverdue       = "mark_overdue"
	SweepIssueInstallments = "issue_installments"
	SweepRecoverIntents    = "recover_payment_intents"
	SweepLapseFirstBills   = "lapse_first_bills"
)

// SweepNames are every sweep's name: the failure metric shows each from
// the start, where a sweep that never failed was missing from it.
var SweepNames = []string{SweepExpirePayments, SweepMarkOverdue, SweepIssueInstallments, SweepRecoverIntents, SweepLapseFirstBills}

// SweepReport is what one run of a sweep did.
type SweepReport struct {
	Moved  int            // rows moved: expired, marked overdue, issued, voided
	Failed []SweepFailure // rows that failed, each recorded to be retried
}

// SweepFailure is a row a sweep failed on; the sweep leaves it alone until
// Retry.
type SweepFailure struct {
	Sweep    string
	Row      DueRow
	Failures int // in a row, this one included
	Retry    time.Time
	Err      error
}

// SweepBackoff is how long a row waits after its n-th failure in a row:
// a minute, four times longer after each failure, at most six hours.
func SweepBackoff(failures int) time.Duration {
	d := time.Minute
	for i := 1; i < failures && d < 6*time.Hour; i++ {
		d *= 4
	}
	return min(d, 6*time.Hour)
}

// Sweeps make the moves that the passing of time causes. Each selection is
// read on its own; every row is then read, decided and applied again like
// any request, so a row that moved meanwhile is skipped, never moved twice.
// Each row stands alone: one that fails is recorded with its retry time and
// reported, and the sweep goes on with the others.
type Sweeps struct {
	store     SweepStore
	payments  *Payments
	clock     Clock
	links     PublicLinks
	companies []string
}

// NewSweeps returns the sweeps; expiries and issues go through payments.
func NewSweeps(store SweepStore, payments *Payments, clock Clock, links PublicLinks) *Sweeps {
	return &Sweeps{store: store, payments: payments, clock: clock, links: links}
}

var _ SweepService = (*Sweeps)(nil)

// Only returns sweeps that touch these companies' rows alone: tests that
// share a database move their own clock without moving anyone else's rows.
func (s *Sweeps) Only(companyIDs ...string) *Sweeps {
	only := *s
	only.companies = companyIDs
	return &only
}

func (s *Sweeps) due() Due {
	return Due{Now: s.clock.Now(), Companies: s.companies, Limit: sweepBatch}
}

// drain runs fn (as each does) on the rows selected, batch after batch,
// while a batch comes full of rows this run has not seen, and begins no
// batch after sweepRunBudget. A row seen again was left where it was
// (skipped, not failed), and is not run again: selecting on would only
// find it again.
func (s *Sweeps) drain(ctx context.Context, sweep string, selected func(Due) ([]DueRow, error), fn func(DueRow) (bool, error)) (SweepReport, error) {
	var r SweepReport
	began := s.clock.Now()
	seen := map[string]bool{}
	for {
		rows, err := selected(s.due())
		if err != nil {
			return r, err
		}
		fresh, todo := len(rows) == sweepBatch, make([]DueRow, 0, len(rows))
		for _, row := range rows {
			if seen[row.ID] {
				fresh = false
				continue
			}
			seen[row.ID] = true
			todo = append(todo, row)
		}
		batch, err := s.each(ctx, sweep, todo, fn)
		r.Moved += batch.Moved
		r.Failed = append(r.Failed, batch.Failed...)
		if err != nil || !fresh || s.clock.Now().Sub(began) >= sweepRunBudget {
			return r, err
		}
	}
}

// each runs fn on every row; fn reports whether it moved the row. A row's
// failure is recorded (with its retry time) and reported; a row that
// succeeds after failures has them forgotten. Only the store failing to
// record, or ctx ending, stops the sweep.
func (s *Sweeps) each(ctx context.Context, sweep string, rows []DueRow, fn func(DueRow) (bool, error)) (SweepReport, error) {
	var r SweepReport
	for _, row := range rows {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		moved, err := fn(row)
		if err == nil {
			if moved {
				r.Moved++
			}
			if row.Failures > 0 {
				if err := s.store.ClearSweepFailure(ctx, sweep, row.ID); err != nil {
					return r, err
				}
			}
			continue
		}
		if ctx.Err() != nil {
			return r, ctx.Err() // cut short, not the row's fault
		}
		f := SweepFailure{Sweep: sweep, Row: row, Failures: row.Failures + 1, Err: err}
		f.Retry = s.clock.Now().Add(SweepBackoff(f.Failures))
		if err := s.store.RecordSweepFailure(ctx, f); err != nil {
			return r, err
		}
		r.Failed = append(r.Failed, f)
	}
	return r, nil
}

// sweepKey marks a context as a sweep's (Sweeping).
type sweepKey struct{}

func sweeping(ctx context.Context) context.Context { return context.WithValue(ctx, sweepKey{}, true) }

// Sweeping tells whether ctx is a sweep's. A sweep's writes take no
// company's turn on PostgreSQL (the store's write turns): a sweep works one
// row at a time, every company's in turn, so it holds one connection at
// most, and one company whose charges queued on a locked offer row held
// its turns, and with them every company's sweep behind its row (a
// review).
func Sweeping(ctx context.Context) bool {
	v, _ := ctx.Value(sweepKey{}).(bool)
	return v
}

// ExpireDuePayments expires unpaid payments past their expiry, each in its
// own change, and re-issues the boleto of an installment that stays open.
func (s *Sweeps) ExpireDuePayments(ctx context.Context) (SweepReport, error) {
	ctx = sweeping(ctx)
	return s.drain(ctx, SweepExpirePayments, func(d Due) ([]DueRow, error) { return s.store.ExpiredPayments(ctx, d) }, func(p DueRow) (bool, error) {
		_, err := s.payments.expire(ctx, p.Auth, p.ID, false)
		if ErrorCode(err) == EINVALIDSTATE {
			return false, nil // paid or expired meanwhile
		}
		return err == nil, err
	})
}

// MarkOverdue moves late installments to overdue (mover.markOverdue).
// Down payments are not swept here: they expire instead.
func (s *Sweeps) MarkOverdue(ctx context.Context) (SweepReport, error) {
	ctx = sweeping(ctx)
	return s.drain(ctx, SweepMarkOverdue, func(d Due) ([]DueRow, error) { return s.store.LateInstallments(ctx, d) }, func(b DueRow) (bool, error) {
		moved := false
		err := decideAndApply("bill", func() error {
			bill, c, err := s.store.Bill(ctx, b.Auth, b.ID)
			if err != nil {
				return err
			}
			m := newMover(b.Auth, s.clock.Now(), s.links.Links(b.Auth.Environment))
			if moved, err = m.markOverdue(bill, c); err != nil || !moved {
				return err
			}
			return s.store.Apply(ctx, m.change())
		})
		return moved, err
	})
}

// IssueDueInstallments issues the payment of every open installment of an
// active billing whose due date is within the company's issue window and
// that has no live payment yet.
func (s *Sweeps) IssueDueInstallments(ctx context.Context) (SweepReport, error) {
	ctx = sweeping(ctx)
	return s.drain(ctx, SweepIssueInstallments, func(d Due) ([]DueRow, error) { return s.store.InstallmentsToIssue(ctx, d) }, func(b DueRow) (bool, error) {
		return s.payments.issueInstallment(ctx, b.Auth, b.ID, true)
	})
}

// RecoverIntents voids the payment intents whose issuer stopped: issuing,
// or left voiding, for longer than IntentTimeout. Voiding is always safe:
// a charge that lost its payment was never stored (its client is told to
// retry), and an installment without a payment is issued again by
// IssueDueInstallments.
func (s *Sweeps) RecoverIntents(ctx context.Context) (SweepReport, error) {
	ctx = sweeping(ctx)
	stale := func(d Due) ([]DueRow, error) { return s.store.StaleIntents(ctx, d, d.Now.Add(-IntentTimeout)) }
	return s.drain(ctx, SweepRecoverIntents, stale, func(in DueRow) (bool, error) {
		return s.payments.issuer.void(ctx, in.Auth.Environment, in.ID)
	})
}

// LapseFirstBills cancels the billings, and their orders, whose first bill
// is past its due date with nothing to pay it with (Bill.lapsed): a first
// bill charged for a card the payer never paid with.
func (s *Sweeps) LapseFirstBills(ctx context.Context) (SweepReport, error) {
	ctx = sweeping(ctx)
	return s.drain(ctx, SweepLapseFirstBills, func(d Due) ([]DueRow, error) { return s.store.LapsedFirstBills(ctx, d) }, func(row DueRow) (bool, error) {
		moved := false
		err := decideAndApply("bill", func() error {
			moved = false
			found, _, err := s.store.Bill(ctx, row.Auth, row.ID)
			if err != nil {
				return err
			}
			o, err := s.store.Order(ctx, row.Auth, found.OrderID)
			if err != nil {
				return err
			}
			o.linkBills()
			now := s.clock.Now()
			for _, b := range o.Billings {
				for _, bill := range b.Bills {
					if bill.ID != row.ID || !bill.lapsed(now) {
						continue
					}
					m := newMover(row.Auth, now, s.links.Links(row.Auth.Environment))
					if err := m.lapse(o, b, o.Offer.Product.Company); err != nil {
						return err
					}
					moved = true
					return s.store.Apply(ctx, m.change())
				}
			}
			return nil
		})
		return moved, err
	})
}
