package parcela

import "time"

// When a bill is late, and what it owes. A payer is late only with a way
// to pay: a bill turns overdue and accrues a fine and interest only while
// it has a live (unpaid) payment, and only after the later of its
// effective due date and, when its first payment was issued after that
// date, that payment's expiry.

// unpaidPayment is the bill's payment that can still be paid, if any.
func (b *Bill) unpaidPayment() *Payment {
	for _, p := range b.Payments {
		if p.Status == PaymentUnpaid {
			return p
		}
	}
	return nil
}

// lateFrom is the instant after which the bill is late.
func (b *Bill) lateFrom() time.Time {
	t := b.EffectiveDueDate
	var first *Payment
	for _, p := range b.Payments {
		if first == nil || p.CreatedAt.Before(first.CreatedAt) {
			first = p
		}
	}
	if first != nil && first.CreatedAt.After(t) && first.ExpiresAt.After(t) {
		t = first.ExpiresAt
	}
	return t
}

// penaltyAt is the penalty of the open bill at t, whether or not it has a
// live payment now: what a payment issued for it must carry.
func (b *Bill) penaltyAt(t time.Time, c *Company) Penalty {
	return LatePenalty(b.AmountCents, b.lateFrom(), b.DisablePenaltiesUntil, t, c.FineRate, c.MonthlyInterestRate)
}

// received is what the bill's payments received without paying it in
// full: settlements below a payment's amount (PayPayment).
func (b *Bill) received() int64 {
	var sum int64
	for _, p := range b.Payments {
		if p.Status != PaymentPaid {
			sum += p.PaidAmountCents
		}
	}
	return sum
}

// owed is what the bill still owes at t: its original amount with the
// penalty at t, less what it received.
func (b *Bill) owed(t time.Time, c *Company) int64 {
	return b.penaltyAt(t, c).Total(b.AmountCents) - b.received()
}
