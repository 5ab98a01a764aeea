package parcela

import "time"

// When a bill is late, and what it owes. Only an installment is ever late:
// a first bill (a down payment, an upfront bill) is paid or lapses. A
// payer is late only once given a way to pay: an installment never issued
// a Pix or boleto owes no fine or interest, and one issued its first
// payment after its effective due date is late only once that payment
// expires. From then the penalty accrues whether or not a payment is live
// (one that expired unpaid is re-issued carrying it), while the bill turns
// overdue only with a live one (markOverdue). A card attempt is no payment
// issued to the payer: it counts for neither.

// unpaidPayment is the bill's payment that can still be paid, if any.
func (b *Bill) unpaidPayment() *Payment {
	for _, p := range b.Payments {
		if p.Status == PaymentUnpaid {
			return p
		}
	}
	return nil
}

// firstIssued is the first Pix or boleto issued for the bill, nil for
// none: a card attempt expires as it is made, and issues the payer nothing
// to pay with later.
func (b *Bill) firstIssued() *Payment {
	var first *Payment
	for _, p := range b.Payments {
		if p.Method != MethodCreditCard && (first == nil || p.CreatedAt.Before(first.CreatedAt)) {
			first = p
		}
	}
	return first
}

// lateFrom is the instant after which the bill is late: its effective due
// date, or, when its first Pix or boleto was issued only past it, that
// payment's last instant that settles it, the millisecond before its
// expiry (settlesAt). After the expiry itself, the bill was not late at
// that instant though nothing paid it any more: a card charged it its
// bare amount while a boleto asked for then carried the penalty.
func (b *Bill) lateFrom() time.Time {
	t := b.EffectiveDueDate
	if first := b.firstIssued(); first != nil && first.CreatedAt.After(t) && first.ExpiresAt.After(t) {
		t = first.ExpiresAt.Add(-time.Millisecond)
	}
	return t
}

// Why an installment owes no penalty until when it does
// (Bill.PenaltyFreeThrough).
const (
	PenaltyFreeEffectiveDue = "effective_due_date" // its due date, moved to the next business day
	PenaltyFreeFirstBoleto  = "first_boleto"       // its first boleto, issued past that date, still settles it
	PenaltyFreeFirstPix     = "first_pix"          // its first Pix, likewise
	PenaltyFreeWaiver       = "waiver"             // the seller waived penalties until later
)

// PenaltyFreeThrough is the last instant an installment owes no fine or
// interest, as its penalty reads it (LatePenalty), and why: the later of
// lateFrom and the last instant its waiver waives. The checkout names its
// day: it named the effective due date, a past day, while the bill owed
// nothing because of a late-issued boleto or a waiver (an audit).
func (b *Bill) PenaltyFreeThrough() (time.Time, string) {
	t, why := b.lateFrom(), PenaltyFreeEffectiveDue
	if !t.Equal(b.EffectiveDueDate) {
		why = PenaltyFreeFirstBoleto
		if b.firstIssued().Method == MethodPix {
			why = PenaltyFreeFirstPix
		}
	}
	if b.DisablePenaltiesUntil != nil {
		if w := waivedThrough(*b.DisablePenaltiesUntil); w.After(t) {
			t, why = w, PenaltyFreeWaiver
		}
	}
	return t, why
}

// lateDue is the due date a late bill's interest counts from: its own,
// though it was payable through the next business day (late after that,
// it owes every calendar day since, as a bank charges it), or, when its
// first Pix or boleto was issued only past it, that payment's last
// instant that settles it (lateFrom). Counted from the expiry itself, a
// payment expiring the millisecond after its last payable day
// (ExpiryAfter, 00:00:00.000 of the next) made that next day no day late:
// a day's interest short on every day after.
func (b *Bill) lateDue() time.Time {
	if t := b.lateFrom(); !t.Equal(b.EffectiveDueDate) {
		return t
	}
	return b.DueDate
}

// LateSince is the instant the bill's interest counts from (its days late
// are São Paulo dates after it): the later of its lateDue and the end of
// a waiver (its last instant waived, waivedThrough).
func (b *Bill) LateSince() time.Time {
	t := b.lateDue()
	if b.DisablePenaltiesUntil != nil {
		if last := waivedThrough(*b.DisablePenaltiesUntil); last.After(t) {
			t = last
		}
	}
	return t
}

// penaltyAt is the penalty of the open bill at t, whether or not it has a
// live payment now: what a payment issued for it must carry. A first bill
// owes none, nor an installment never issued a Pix or boleto. It stops where the bill's current amount reaches
// MaxAmountCents: no boleto or Pix code carries more, so a larger amount
// could never be issued and the bill never paid.
func (b *Bill) penaltyAt(t time.Time, c *Company) Penalty {
	if b.Type != BillTypeInstallment || b.firstIssued() == nil {
		return Penalty{}
	}
	p := LatePenalty(b.AmountCents, b.lateDue(), b.lateFrom(), b.DisablePenaltiesUntil, t, c.FineRate, c.MonthlyInterestRate)
	room := max(0, MaxAmountCents-b.AmountCents)
	p.FineCents = min(p.FineCents, room)
	p.InterestCents = min(p.InterestCents, room-p.FineCents)
	return p
}

// Received is what the bill's payments received without paying it in
// full: settlements below a payment's amount (PayPayment).
func (b *Bill) Received() int64 {
	var sum int64
	for _, p := range b.Payments {
		if p.Status != PaymentPaid {
			sum += p.PaidAmountCents
		}
	}
	return sum
}

// ReceivedInAll is what every payment of the bill received, the ones that
// paid it included: on an open bill, what its current amount is asked
// less of; on a paid one, beyond what it owed, the seller's to refund.
func (b *Bill) ReceivedInAll() int64 {
	var sum int64
	for _, p := range b.Payments {
		sum += p.PaidAmountCents
	}
	return sum
}

// CurrentAmount is the bill's current_amount_cents at now: an open bill's
// amount with its penalty at now; a paid one's, what it owed when paid
// (paidMeasuredAt), so that what it received beyond is only what the
// seller is to refund, where a late bill's fine and interest, paid, read
// as paid over; a canceled one's, its amount.
func (b *Bill) CurrentAmount(now time.Time, c *Company) int64 {
	switch {
	case b.open():
		return b.penaltyAt(now, c).Total(b.AmountCents)
	case b.Status == BillPaid:
		if b.Type != BillTypeInstallment || b.PaidAt == nil || !b.PaidAt.After(b.EffectiveDueDate) {
			// Paid in its time (or a first bill): no penalty to measure,
			// and a listing of paid bills reads no payment's linha for it.
			return b.AmountCents
		}
		if at, ok := b.paidMeasuredAt(c); ok {
			// Never more than it received: the settlement took that as
			// paying it (a bank's notice of a boleto's own amount after
			// its due date, say).
			return max(b.AmountCents, min(b.penaltyAt(at, c).Total(b.AmountCents), b.ReceivedInAll()))
		}
	}
	return b.AmountCents
}

// paidMeasuredAt is the instant whose penalty the settlement that paid
// the bill measured what it owed at (pay): that of the payment settled at
// the bill's paid_at: the one that received its whole amount, which paid
// it whatever else was settled at that instant, else (of two parts) the
// one priced for the earlier day, as lastReceived takes it. Paid by its
// own amount, the bill owed what that amount was priced for (pricedAt),
// or, paid by a boleto's barcode after the due date it carries, what the
// bank took then; paid by what its payments received together, what it
// owed when that was all in, measured as that payment measures it
// (owedBy). Paid by no payment's settlement (a waiver took back the
// penalty its payments had not received: waive), what it owed at paid_at.
// false without a paid_at.
func (b *Bill) paidMeasuredAt(c *Company) (time.Time, bool) {
	if b.PaidAt == nil {
		return time.Time{}, false
	}
	var last *Payment
	for _, q := range b.Payments {
		if q.PaidAmountCents <= 0 || q.PaidAt == nil || !q.PaidAt.Equal(*b.PaidAt) {
			continue
		}
		whole, lastWhole := q.PaidAmountCents >= q.AmountCents, last != nil && last.PaidAmountCents >= last.AmountCents
		if last == nil || whole && !lastWhole || whole == lastWhole && b.pricedAt(q, c).Before(b.pricedAt(last, c)) {
			last = q
		}
	}
	if last == nil {
		return *b.PaidAt, true
	}
	if last.PaidAmountCents < last.AmountCents {
		return minTime(*b.PaidAt, b.pricedAt(last, c)), true
	}
	if until := last.payableUntil(); !until.IsZero() && b.PaidAt.After(until) {
		return *b.PaidAt, true
	}
	return b.pricedAt(last, c), true
}

// owed is what the bill still owes at t: its original amount with the
// penalty at t, less what it received. It is below zero only when a waiver
// (disable_penalties_until) took back a penalty already partly received.
func (b *Bill) owed(t time.Time, c *Company) int64 {
	return b.penaltyAt(t, c).Total(b.AmountCents) - b.Received()
}

// Outstanding is what the payer is asked for at now: what the open bill
// owes (owed), never less than nothing. A card attempt charges it, and the
// checkout page shows it.
func (b *Bill) Outstanding(now time.Time, c *Company) int64 {
	return max(0, b.Penalty(now, c).Total(b.AmountCents)-b.Received())
}

// pricedAt is the instant whose penalty payment p's amount carries: the
// end of the day a late installment's boleto or Pix was due when issued
// (a boleto's, the due date it carries), its issue for a payment issued
// before the bill was late, a first bill's or a card attempt's. Paid up to
// then, the bill owes its penalty to the payment; after (a boleto paid on
// the business day its weekend due date moves to, or in its settlement
// grace), the payment's amount still pays it, and so does what the bill's
// payments received together, measured at that same instant.
func (b *Bill) pricedAt(p *Payment, c *Company) time.Time {
	if p.Method == MethodCreditCard || b.Type != BillTypeInstallment {
		return p.CreatedAt
	}
	due := installmentDue(c, b, p.CreatedAt)
	if d := p.BoletoDueDate(); !d.IsZero() {
		due = EndOfDay(d)
	} else if p.ExpiresAt.Before(due) {
		due = p.ExpiresAt
	}
	return b.pricedFor(c, p.CreatedAt, due)
}

// LeftToPayWith is what is left to pay with live payment p at now: its
// amount less what it received, and, once another payment of the bill
// received part of it, no more than what p's settlement now needs to pay
// the bill (owedBy). A code's amount cannot change once issued; the
// checkout says this instead. With no other money in, it is the code's
// own rest: a late boleto carries its interest to its due date, which
// the payer pays, though the bill owes less today. A boleto paid by its
// barcode past its due date may take more (BoletoTakes).
func (b *Bill) LeftToPayWith(p *Payment, now time.Time, c *Company) int64 {
	rest := p.AmountCents - p.PaidAmountCents
	if b.ReceivedInAll() == p.PaidAmountCents {
		return rest
	}
	return max(0, min(rest, b.owedBy(p, now, c)))
}

// BoletoTakes is what the bank takes for boleto p paid by its barcode at
// now, when that is more than the code leaves to pay: past the due date
// the boleto carries, the bill's fine and interest (takesAt, as a notice
// without an amount is settled). 0 when the code's own rest is what it
// takes. A bolepix's Pix still pays the code's amount.
func (b *Bill) BoletoTakes(p *Payment, now time.Time, c *Company) int64 {
	if p.Method != MethodBoleto {
		return 0
	}
	if takes := b.takesAt(p, now, c); takes > p.AmountCents-p.PaidAmountCents {
		return takes
	}
	return 0
}

// takesAt is what a settlement of p at paidAt takes when its notice names
// no amount: what the payment's amount leaves to pay, or, paid after the
// payment's own due date (payableUntil) and when more, what the bill owes
// at paidAt (a late payment carries its fine and interest). A boleto whose
// due date cannot be read (none in its linha) is never late: banks charge
// no late fees on a boleto without a due date.
func (b *Bill) takesAt(p *Payment, paidAt time.Time, c *Company) int64 {
	rest := p.AmountCents - p.PaidAmountCents
	until := p.payableUntil()
	if until.IsZero() || !paidAt.After(until) {
		return rest
	}
	return max(rest, b.owed(paidAt, c))
}

// owedBy is what the bill owes a settlement of p paid at paidAt: what it
// owes at paidAt, or, paid after the instant p's amount was priced at,
// what it owed then (the penalty p carries).
func (b *Bill) owedBy(p *Payment, paidAt time.Time, c *Company) int64 {
	return b.owed(minTime(paidAt, b.pricedAt(p, c)), c)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
