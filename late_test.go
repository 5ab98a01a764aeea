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
	if got, last := bill.lateFrom(), o.expires.Add(-time.Millisecond); !got.Equal(last) {
		t.Fatalf("late from %v, want the boleto's last settling instant %v", got, last)
	}
	if p := bill.Penalty(o.expires.Add(-time.Millisecond), &c); p != (Penalty{}) {
		t.Fatalf("penalty %+v at the boleto's last settling instant", p)
	}
	if p := bill.Penalty(o.expires, &c); p.FineCents == 0 {
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

// A late bill's fine and interest stop where its amount reaches what a
// boleto or Pix code carries: interest is cut first, then the fine, and a
// bill already at that amount owes no more.
func TestLatePenaltyStopsAtTheLargestBoleto(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	eff := time.Date(2027, time.March, 1, 23, 59, 59, 999e6, SaoPaulo)
	now := time.Date(2027, time.September, 1, 10, 0, 0, 0, SaoPaulo) // 184 days late
	issued := time.Date(2027, time.February, 20, 9, 0, 0, 0, SaoPaulo)
	tests := []struct {
		name            string
		amount          int64
		fine, interest  int64
		wantOutstanding int64
	}{
		// 2% and 184 days at 1%/30 a day fit: nothing is cut.
		{"far below", 100_000_000, 2_000_000, 6_133_333, 108_133_333},
		// 9,500,000,000: fine 190,000,000 fits, interest 582,666,667 is cut to 309,999,999.
		{"interest cut", 9_500_000_000, 190_000_000, MaxAmountCents - 9_500_000_000 - 190_000_000, MaxAmountCents},
		// 9,900,000,000: the fine alone (198,000,000) is past it.
		{"fine cut", 9_900_000_000, MaxAmountCents - 9_900_000_000, 0, MaxAmountCents},
		{"at the largest", MaxAmountCents, 0, 0, MaxAmountCents},
	}
	for _, tt := range tests {
		bill := &Bill{Type: BillTypeInstallment, Status: BillOverdue, AmountCents: tt.amount, DueDate: eff, EffectiveDueDate: eff,
			Payments: []*Payment{{Method: MethodBoleto, Status: PaymentUnpaid, AmountCents: tt.amount, CreatedAt: issued, ExpiresAt: eff.AddDate(0, 0, 2)}}}
		want := Penalty{FineCents: tt.fine, InterestCents: tt.interest, DaysLate: 184}
		if got := bill.Penalty(now, &c); got != want {
			t.Errorf("%s: penalty %+v, want %+v", tt.name, got, want)
		}
		if got := bill.Outstanding(now, &c); got != tt.wantOutstanding {
			t.Errorf("%s: outstanding %d, want %d", tt.name, got, tt.wantOutstanding)
		}
		if o := installmentPayment(&c, &PaymentConfiguration{}, bill, now); o.amount > MaxAmountCents {
			t.Errorf("%s: boleto of %d cents, more than %d", tt.name, o.amount, int64(MaxAmountCents))
		}
	}
}

// A late installment whose boleto expired with nothing issued after it
// (the provider down at the re-issue) still owes the penalty accrued: the
// API's current amount, the checkout's and the boleto issued next agree,
// and a boleto that received more than the original amount leaves the
// bill owing the rest, never less than nothing. A bill never issued a Pix
// or boleto is not late, live payment or not.
func TestLatePenaltyIsOwedWithoutALivePayment(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	eff := time.Date(2027, time.March, 1, 23, 59, 59, 999e6, SaoPaulo)
	issued := time.Date(2027, time.February, 20, 9, 0, 0, 0, SaoPaulo)
	bill := &Bill{Type: BillTypeInstallment, Status: BillOverdue, AmountCents: 100_000, DueDate: eff, EffectiveDueDate: eff,
		Billing: &Billing{Status: BillingActive}}
	boleto := &Payment{Method: MethodBoleto, Status: PaymentUnpaid, AmountCents: 100_000, CreatedAt: issued, ExpiresAt: eff.AddDate(0, 0, 2)}
	bill.Payments = []*Payment{boleto}
	live := eff.AddDate(0, 0, 1)
	if p := bill.Penalty(live, &c); p.FineCents != 2_000 || p.InterestCents != 33 {
		t.Fatalf("penalty %+v a day late", p)
	}
	// Expired having received the original amount and R$ 1,00.
	boleto.Status, boleto.PaidAmountCents = PaymentExpired, 100_100
	now := eff.AddDate(0, 0, 10)
	want := Penalty{FineCents: 2_000, InterestCents: 333, DaysLate: 10}
	if got := bill.Penalty(now, &c); got != want {
		t.Fatalf("penalty %+v with no live payment, want %+v", got, want)
	}
	if got, owed := bill.Outstanding(now, &c), bill.owed(now, &c); got != 2_233 || owed != got {
		t.Fatalf("outstanding %d, owed %d; want 2233", got, owed)
	}
	if f := NewBillEndpointForm(bill, &c, now, Links{}); f.CurrentAmountCents != 102_333 {
		t.Fatalf("current_amount_cents %d, want 102333", f.CurrentAmountCents)
	}
	o := installmentPayment(&c, &PaymentConfiguration{}, bill, now)
	if o.amount != bill.owed(o.due, &c) || o.amount < bill.Outstanding(now, &c) {
		t.Fatalf("boleto re-issued for %d, owed %d at its due date, %d now", o.amount, bill.owed(o.due, &c), bill.Outstanding(now, &c))
	}
	// A waiver past now leaves what was received above the original
	// amount: nothing is owed, never less.
	waived := now.AddDate(0, 0, 5)
	bill.DisablePenaltiesUntil = &waived
	if got := bill.Outstanding(now, &c); got != 0 {
		t.Fatalf("outstanding %d under a waiver, want 0", got)
	}
	never := &Bill{Type: BillTypeInstallment, Status: BillPending, AmountCents: 100_000, DueDate: eff, EffectiveDueDate: eff,
		Billing: &Billing{Status: BillingActive}}
	if p, owed := never.Penalty(now, &c), never.owed(now, &c); p != (Penalty{}) || owed != 100_000 {
		t.Fatalf("never issued: penalty %+v, owes %d", p, owed)
	}
}

// An installment whose first Pix was issued past its due date owes
// interest from the end of that Pix's last payable day: the day after is
// one day late. The Pix expires the millisecond after that day
// (ExpiryAfter, 00:00:00.000), and counted from its expiry the day after
// was no day late, every later day one short.
func TestLateIssuedPixCountsItsFirstLateDay(t *testing.T) {
	t.Parallel()
	c := &Company{FineRate: MustRate("0.02"), MonthlyInterestRate: MustRate("0.01")}
	due := time.Date(2027, 3, 10, 23, 59, 59, 999_000_000, SaoPaulo) // a Wednesday
	issued := time.Date(2027, 3, 15, 10, 0, 0, 0, SaoPaulo)          // past its effective due date
	lastPayable := EndOfDay(time.Date(2027, 3, 16, 12, 0, 0, 0, SaoPaulo))
	bill := &Bill{Type: BillTypeInstallment, Status: BillPending, AmountCents: 30000, DueDate: due, EffectiveDueDate: EffectiveDueDate(due),
		Payments: []*Payment{{Method: MethodPix, Status: PaymentExpired, AmountCents: 30000, CreatedAt: issued, ExpiresAt: ExpiryAfter(lastPayable)}}}
	if p := bill.Penalty(lastPayable, c); p != (Penalty{}) {
		t.Fatalf("late on the Pix's last payable day: %+v", p)
	}
	for days, now := range map[int64]time.Time{
		1:  time.Date(2027, 3, 17, 10, 0, 0, 0, SaoPaulo),
		2:  time.Date(2027, 3, 18, 10, 0, 0, 0, SaoPaulo),
		30: time.Date(2027, 4, 15, 23, 59, 59, 0, SaoPaulo),
	} {
		// 2% of 30000 and 1% a month: 10 cents a day.
		want := Penalty{FineCents: 600, InterestCents: 10 * days, DaysLate: days}
		if got := bill.Penalty(now, c); got != want {
			t.Errorf("at %s: %+v, want %+v", now.Format(time.DateTime), got, want)
		}
	}
}

// An installment whose first Pix or boleto was issued past its due date
// is late from the instant that payment stops settling it, its expiry:
// not a millisecond later. At a late Pix's expiry (00:00:00.000 after its
// last payable day) the bill was not late yet, so a card charged it the
// bare amount and the API showed that, while a boleto asked for at the
// same instant carried the fine and the day's interest, and the overdue
// sweep left it pending.
func TestLateIssuedPaymentIsLateAsItExpires(t *testing.T) {
	t.Parallel()
	due := time.Date(2027, 3, 10, 23, 59, 59, 999_000_000, SaoPaulo) // a Wednesday
	issued := time.Date(2027, 3, 15, 10, 0, 0, 0, SaoPaulo)          // past its effective due date
	for _, tt := range []struct {
		name    string
		method  string
		grace   int
		expires time.Time
	}{
		{"a Pix", MethodPix, 1, ExpiryAfter(EndOfDay(time.Date(2027, 3, 18, 0, 0, 0, 0, SaoPaulo)))},
		{"a boleto without grace", MethodBoleto, 0, BoletoExpiry(EndOfDay(time.Date(2027, 3, 18, 0, 0, 0, 0, SaoPaulo)), 0)},
		{"a boleto with a day of grace", MethodBoleto, 1, BoletoExpiry(EndOfDay(time.Date(2027, 3, 18, 0, 0, 0, 0, SaoPaulo)), 1)},
	} {
		c := NewCompany("Escola", "11222333000181", "escola")
		c.BoletoGraceBusinessDays = tt.grace
		first := &Payment{Method: tt.method, Status: PaymentUnpaid, AmountCents: 30000, CreatedAt: issued, ExpiresAt: tt.expires}
		bill := &Bill{Type: BillTypeInstallment, Status: BillPending, AmountCents: 30000, DueDate: due, EffectiveDueDate: EffectiveDueDate(due),
			Payments: []*Payment{first}, Billing: &Billing{Status: BillingActive}}
		last := tt.expires.Add(-time.Millisecond)
		if !first.settlesAt(last) || first.settlesAt(tt.expires) {
			t.Fatalf("%s: settles through %v, not at %v", tt.name, last, tt.expires)
		}
		if p := bill.Penalty(last, &c); p != (Penalty{}) {
			t.Errorf("%s: late at %v, its last settling instant: %+v", tt.name, last, p)
		}
		if o := installmentPayment(&c, &PaymentConfiguration{}, bill, last); o.amount != 30000 {
			t.Errorf("%s: a boleto asked for at %v, the first still settling, asks %d; want 30000", tt.name, last, o.amount)
		}
		if moved, _ := newMover(Auth{}, last, Links{}).markOverdue(bill, &c); moved {
			t.Errorf("%s: overdue at %v, its last settling instant", tt.name, last)
		}
		// 2% of 30000 and 1% a month: 10 cents a day, one day late at
		// 00:00 after the last payable day.
		want := Penalty{FineCents: 600, InterestCents: 10, DaysLate: 1}
		if got := bill.Penalty(tt.expires, &c); got != want {
			t.Errorf("%s: at its expiry %v the bill owes %+v, want %+v", tt.name, tt.expires, got, want)
		}
		o := installmentPayment(&c, &PaymentConfiguration{}, bill, tt.expires)
		if owed := bill.Outstanding(EndOfDay(o.due), &c); o.amount != owed {
			t.Errorf("%s: a boleto asked for at the expiry asks %d, the bill owes %d at its due day's end", tt.name, o.amount, owed)
		}
		if moved, _ := newMover(Auth{}, tt.expires, Links{}).markOverdue(bill, &c); !moved {
			t.Errorf("%s: not overdue at its first payment's expiry %v", tt.name, tt.expires)
		}
	}
}
