package parcela

import (
	"errors"
	"fmt"
	"time"
)

// Change is a decided state change: the moves of existing rows, each
// guarded by the state it was decided on, the rows it creates and the events
// it emits. The store applies it in one transaction, or not at all.
type Change struct {
	At time.Time
	// Owner is the company and environment whose change it is: on
	// PostgreSQL its transaction waits for the owner's turn.
	Owner       Auth
	Billings    []BillingMove
	Order       *OrderMove
	Bills       []BillMove
	Payments    []PaymentMove
	NewBilling  *Billing   // with its bills
	NewPayments []*Payment // issued before the change was applied
	// SeatOf is the offer a charge takes a seat of; it must still be
	// sellable at At when the change is applied.
	SeatOf *Offer
	Events []Event
	// Voids are the issued payments the change cancels, to be voided at
	// the provider once it commits (the store queues a job for each in
	// the change's transaction): a boleto or Pix canceled here stays
	// payable at the bank until then.
	Voids []CancelRequest
	// Notice is the bank's notice the change applies, stored under its
	// id in the same transaction: a second of the same id is a conflict.
	Notice *SettlementNotice
}

// OrderMove writes Order's status, cancelation reason and update time if
// the stored order is still From.
type OrderMove struct {
	Order *Order
	From  string
}

// BillingMove writes Billing's status, cancelation reason, finish and update
// times if the stored billing is still From at Version, and bumps its
// version. Every change to a billing's bills or payments moves the billing
// too (From == Billing.Status when only the version moves), so two changes
// decided on the same state of a billing cannot both commit.
type BillingMove struct {
	Billing *Billing
	From    string
	Version int64
}

// BillMove writes Bill's status, paid_at, penalty waiver and update time if
// the stored bill is still From.
type BillMove struct {
	Bill *Bill
	From string
}

// PaymentMove writes Payment's status, paid amount, paid_at and update
// time if the stored payment is still From.
type PaymentMove struct {
	Payment *Payment
	From    string
}

// Conflict is the store's report that a guarded write found its row moved
// since it was read (or a racing insert took its place). Nothing of the
// change was kept; the use case reads again and decides again.
type Conflict struct {
	Entity string
	ID     string
}

func (c *Conflict) Error() string {
	return fmt.Sprintf("%s %s changed since it was read", c.Entity, c.ID)
}

// IsConflict tells whether err is (or wraps) a *Conflict.
func IsConflict(err error) bool {
	var c *Conflict
	return errors.As(err, &c)
}

// maxDecisions bounds how often a use case reads, decides and applies again
// after conflicts. Two racing requests need two rounds; more means the row
// is under a storm of changes, and the caller is told to retry.
const maxDecisions = 8

// decideAndApply runs attempt (read, decide, apply) until it does not
// conflict. Giving up is ECONFLICT, not EINVALIDSTATE: nothing was done
// and a retry may succeed, so the answer is not stored under an
// Idempotency-Key (a retry replaying it would never run).
func decideAndApply(what string, attempt func() error) error {
	for range maxDecisions {
		if err := attempt(); !IsConflict(err) {
			return err
		}
	}
	return Errorf(ECONFLICT, "the %s kept changing under concurrent requests; nothing was done; retry", what)
}
