package parcela

import (
	"testing"
	"time"
)

// A refused card attempt issues the payer nothing to pay with: an
// installment past its due date with no boleto yet stays not late through
// the attempt, and the boleto issued after it carries the original amount
// and makes the bill late only once it expires.
func TestCardAttemptMakesNoInstallmentLate(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	bill := &Bill{Type: BillTypeInstallment, Status: BillPending, AmountCents: 34504,
		DueDate:          time.Date(2027, time.January, 10, 0, 0, 0, 0, SaoPaulo), // a Sunday
		EffectiveDueDate: time.Date(2027, time.January, 11, 23, 59, 59, 999e6, SaoPaulo)}
	at := time.Date(2027, time.January, 13, 23, 59, 59, 999e6, SaoPaulo) // the last instant of the day
	bill.Payments = []*Payment{{Method: MethodCreditCard, Status: PaymentRefused, AmountCents: 34504, CreatedAt: at, ExpiresAt: at}}
	if got := bill.lateFrom(); !got.Equal(bill.EffectiveDueDate) {
		t.Fatalf("late from %v after a card attempt, want its effective due date", got)
	}
	for _, now := range []time.Time{at, at.Add(time.Minute)} {
		o := installmentPayment(&c, &PaymentConfiguration{}, bill, now)
		if o.amount != bill.AmountCents || !o.expires.After(now) {
			t.Fatalf("boleto issued at %v: %d cents, expires %v; want %d cents, live", now, o.amount, o.expires, bill.AmountCents)
		}
	}
	issued := at.Add(time.Minute)
	o := installmentPayment(&c, &PaymentConfiguration{}, bill, issued)
	bill.Payments = append(bill.Payments, &Payment{Method: MethodBoleto, Status: PaymentUnpaid, AmountCents: o.amount, CreatedAt: issued, ExpiresAt: o.expires})
	if got := bill.lateFrom(); !got.Equal(o.expires) {
		t.Fatalf("late from %v, want the boleto's expiry %v", got, o.expires)
	}
	if p := bill.Penalty(o.expires, &c); p != (Penalty{}) {
		t.Fatalf("penalty %+v at the boleto's expiry", p)
	}
	if p := bill.Penalty(o.expires.Add(time.Millisecond), &c); p.FineCents == 0 {
		t.Fatal("no fine once the boleto expired")
	}
}

// A first bill is paid or lapses; it never owes a fine or interest, even
// past its due instant while a boleto asked for on the checkout is still
// payable.
func TestFirstBillOwesNoPenalty(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	due := time.Date(2026, time.November, 27, 15, 30, 0, 0, SaoPaulo) // a Pix down payment's due instant, a Friday
	bill := &Bill{Type: BillTypeDownPayment, Status: BillPending, AmountCents: 30000, DueDate: due, EffectiveDueDate: due}
	o := firstPayment(&c, bill, MethodBoleto, due.Add(-time.Hour))
	issued := time.Date(2026, time.November, 27, 10, 0, 0, 0, SaoPaulo)
	bill.Payments = []*Payment{{Method: MethodBoleto, Status: PaymentUnpaid, AmountCents: o.amount, CreatedAt: issued, ExpiresAt: o.expires}}
	for _, now := range []time.Time{due.Add(time.Millisecond), time.Date(2026, time.November, 30, 10, 0, 0, 0, SaoPaulo), o.expires} {
		if p := bill.Penalty(now, &c); p != (Penalty{}) {
			t.Fatalf("penalty %+v at %v", p, now)
		}
		if owed := bill.owed(now, &c); owed != bill.AmountCents {
			t.Fatalf("owes %d at %v, want %d", owed, now, bill.AmountCents)
		}
	}
}
