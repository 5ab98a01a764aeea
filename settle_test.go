package parcela

import (
	"slices"
	"strings"
	"testing"
	"time"

	"parcela/brcode"
)

// lateInstallment is a 10000-cent installment due Sunday 10 January 2027
// (payable Monday the 11th) whose first boleto expired unpaid on the 12th,
// and which was issued, on the 13th, a late boleto and a Pix, each priced
// at what it owes at the end of Saturday the 16th (10217: a 2% fine and 5
// days of 1% a month). The boleto is payable for that amount through
// Monday the 18th and expires on the 19th; the Pix expires on the 18th.
func lateInstallment(t *testing.T) (*Order, *Company, *Bill, *Payment, *Payment) {
	t.Helper()
	o, c := chargedOrder(2)
	b := o.Billings[0]
	b.Status, b.Bills[0].Status, b.Bills[0].Payments[0].Status = BillingActive, BillPaid, PaymentPaid
	bill := b.Bills[1]
	due := calEndOfDay(2027, 1, 10)
	bill.Status, bill.DueDate, bill.EffectiveDueDate = BillOverdue, due, EffectiveDueDate(due)
	issued := calSP(2027, 1, 13, 0, 5, 0, 0)
	first := bill.Payments[0]
	first.Method, first.Status, first.CreatedAt, first.ExpiresAt = MethodBoleto, PaymentExpired, calSP(2027, 1, 1, 9, 0, 0, 0), calEndOfDay(2027, 1, 12)
	pc := &PaymentConfiguration{ID: "pc", PaymentType: Financed}
	boleto := issueForTest(t, c, installmentPayment(c, pc, bill, issued), issued)
	pix := issueForTest(t, c, demandPayment(c, pc, bill, MethodPix, issued), issued)
	if boleto.AmountCents != 10227 || pix.AmountCents != 10227 || !pix.ExpiresAt.Equal(ExpiryAfter(calEndOfDay(2027, 1, 18))) {
		t.Fatalf("late boleto %d, Pix %d expiring %v", boleto.AmountCents, pix.AmountCents, pix.ExpiresAt)
	}
	bill.Payments = append(bill.Payments, boleto, pix)
	return o, c, bill, boleto, pix
}

// issueForTest makes the payment o would issue at now, a boleto with the
// linha digitável carrying its due date.
func issueForTest(t *testing.T, c *Company, o paymentOrder, now time.Time) *Payment {
	t.Helper()
	p := &Payment{ID: "p-" + o.method, BillID: o.bill.ID, Method: o.method, Status: PaymentUnpaid, AmountCents: o.amount,
		ExpiresAt: o.expires, CreatedAt: now, Environment: Sandbox}
	if o.method == MethodBoleto {
		b := brcode.Boleto{BankCode: "001", CurrencyCode: '9', DueDate: o.due.In(SaoPaulo), AmountCents: o.amount, FreeField: strings.Repeat("0", 25)}
		linha, err := b.LinhaDigitavel()
		if err != nil {
			t.Fatal(err)
		}
		p.Barcode = &linha
	}
	return p
}

func settleForTest(t *testing.T, o *Order, c *Company, bill *Bill, p *Payment, at time.Time, cents int64) *mover {
	t.Helper()
	m := newMover(Auth{CompanyID: c.ID, Environment: Sandbox}, at, Links{})
	if err := m.pay(o, o.Billings[0], bill, p, c, Settlement{PaidAmountCents: &cents}); err != nil {
		t.Fatal(err)
	}
	return m
}

// Two payments of a late bill, each paid in part, that together received
// what one of them asked for pay the bill when that one alone, paid its
// amount, would have: its amount carries the penalty to the day it was
// priced for, and paid by its own due date (moved to a business day) or in
// its settlement grace, it pays the bill. The bill used to stay open,
// owing the interest of the days between that date and the payment.
func TestPartialSettlementsOfALateBillPayWhatItsPaymentAskedFor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		pixAt, bolAt time.Time
		pix, boleto  int64
		wantPaid     bool
	}{
		{"both on the boleto's due day", calSP(2027, 1, 18, 9, 0, 0, 0), calSP(2027, 1, 18, 10, 0, 0, 0), 5000, 5227, true},
		{"the boleto's part in its settlement grace", calSP(2027, 1, 18, 9, 0, 0, 0), calSP(2027, 1, 19, 10, 0, 0, 0), 5000, 5227, true},
		{"a cent short", calSP(2027, 1, 18, 9, 0, 0, 0), calSP(2027, 1, 18, 10, 0, 0, 0), 5000, 5226, false},
		// Paid before the day its amount was priced for, the bill owes
		// only the interest to then.
		{"both on the day they were issued", calSP(2027, 1, 13, 9, 0, 0, 0), calSP(2027, 1, 13, 10, 0, 0, 0), 5000, 5210, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, c, bill, boleto, pix := lateInstallment(t)
			settleForTest(t, o, c, bill, pix, tt.pixAt, tt.pix)
			if bill.Status == BillPaid {
				t.Fatal("paid by part of its Pix")
			}
			settleForTest(t, o, c, bill, boleto, tt.bolAt, tt.boleto)
			if (bill.Status == BillPaid) != tt.wantPaid || (boleto.Status == PaymentPaid) != tt.wantPaid {
				t.Fatalf("bill %s, boleto %s (%d received), Pix %s (%d received); want paid %v",
					bill.Status, boleto.Status, boleto.PaidAmountCents, pix.Status, pix.PaidAmountCents, tt.wantPaid)
			}
		})
	}
}

// A settlement that pays a bill closes its other payments, and one that
// received part of it is kept as paid for what it received, never
// canceled: its money paid the bill too (or paid it over, for the seller
// to refund), where it was canceled as if nothing had reached it. Each
// payment paid below its amount, and each canceled one, is voided at the
// provider: its code, still payable at the bank, takes nothing more.
func TestSettlementKeepsWhatTheBillsOtherPaymentsReceived(t *testing.T) {
	t.Parallel()
	o, c, bill, boleto, pix := lateInstallment(t)
	first := bill.Payments[0]
	first.PaidAmountCents = 1000 // received before it expired
	settleForTest(t, o, c, bill, pix, calSP(2027, 1, 14, 9, 0, 0, 0), 3000)
	m := settleForTest(t, o, c, bill, boleto, calSP(2027, 1, 14, 10, 0, 0, 0), 10227) // the boleto's whole amount: 4000 over
	if bill.Status != BillPaid || boleto.Status != PaymentPaid {
		t.Fatalf("bill %s, boleto %s", bill.Status, boleto.Status)
	}
	if pix.Status != PaymentPaid || pix.PaidAmountCents != 3000 {
		t.Fatalf("the Pix that received 3000: %s with %d", pix.Status, pix.PaidAmountCents)
	}
	if first.Status != PaymentExpired || first.PaidAmountCents != 1000 {
		t.Fatalf("the expired boleto that received 1000: %s with %d", first.Status, first.PaidAmountCents)
	}
	var voided []string
	for _, v := range m.change().Voids {
		voided = append(voided, v.PaymentID)
	}
	if len(voided) != 1 || voided[0] != pix.ID {
		t.Fatalf("voided %v, want the Pix's code only", voided)
	}
}

// The bill paid by payments that each received less than their amounts
// leaves every one of them payable at the bank for its rest: each is
// voided.
func TestPaymentsPaidBelowTheirAmountsAreVoided(t *testing.T) {
	t.Parallel()
	o, c, bill, boleto, pix := lateInstallment(t)
	settleForTest(t, o, c, bill, pix, calSP(2027, 1, 18, 9, 0, 0, 0), 5000)
	m := settleForTest(t, o, c, bill, boleto, calSP(2027, 1, 18, 10, 0, 0, 0), 5227)
	if bill.Status != BillPaid || boleto.Status != PaymentPaid || pix.Status != PaymentPaid {
		t.Fatalf("bill %s, boleto %s, Pix %s", bill.Status, boleto.Status, pix.Status)
	}
	var voided []string
	for _, v := range m.change().Voids {
		voided = append(voided, v.PaymentID)
	}
	if len(voided) != 2 || !slices.Contains(voided, pix.ID) || !slices.Contains(voided, boleto.ID) {
		t.Fatalf("voided %v, want the Pix and the boleto", voided)
	}
}

// A waiver cancels a live payment only when the amount it asks carries
// a penalty the waiver takes back: one priced before the bill was late
// stays, whatever another payment received meanwhile, where a boleto of
// the original amount was canceled because a Pix beside it had received
// part of the bill (it asked more than the bill then owed), and the Pix,
// the only payment left, kept the issue sweep from issuing another until
// it expired.
func TestWaiverCancelsOnlyWhatCarriesThePenaltyWaived(t *testing.T) {
	t.Parallel()
	until := calEndOfDay(2027, 12, 31)
	pc := &PaymentConfiguration{ID: "pc", PaymentType: Financed}
	t.Run("priced before the bill was late", func(t *testing.T) {
		o, c := chargedOrder(2)
		b := o.Billings[0]
		b.Status, b.Bills[0].Status, b.Bills[0].Payments[0].Status = BillingActive, BillPaid, PaymentPaid
		bill := b.Bills[1]
		due := calEndOfDay(2027, 1, 10) // Sunday: late after Monday the 11th
		bill.DueDate, bill.EffectiveDueDate, bill.Payments = due, EffectiveDueDate(due), nil
		boleto := issueForTest(t, c, installmentPayment(c, pc, bill, calSP(2027, 1, 1, 9, 0, 0, 0)), calSP(2027, 1, 1, 9, 0, 0, 0))
		bill.Payments = append(bill.Payments, boleto)
		askedAt := calSP(2027, 1, 11, 10, 0, 0, 0)
		pix := issueForTest(t, c, demandPayment(c, pc, bill, MethodPix, askedAt), askedAt)
		bill.Payments = append(bill.Payments, pix)
		settleForTest(t, o, c, bill, pix, calSP(2027, 1, 11, 11, 0, 0, 0), 3000)
		m := newMover(Auth{CompanyID: c.ID}, calSP(2027, 1, 11, 12, 0, 0, 0), Links{})
		if err := m.waive(o, b, bill, c, &until); err != nil {
			t.Fatal(err)
		}
		if boleto.Status != PaymentUnpaid || pix.Status != PaymentUnpaid || len(m.change().Voids) != 0 {
			t.Fatalf("boleto %s, Pix %s after a waiver of a penalty neither carries", boleto.Status, pix.Status)
		}
	})
	t.Run("priced with the penalty", func(t *testing.T) {
		o, c, bill, boleto, pix := lateInstallment(t)
		settleForTest(t, o, c, bill, pix, calSP(2027, 1, 13, 9, 0, 0, 0), 3000)
		m := newMover(Auth{CompanyID: c.ID}, calSP(2027, 1, 13, 10, 0, 0, 0), Links{})
		if err := m.waive(o, o.Billings[0], bill, c, &until); err != nil {
			t.Fatal(err)
		}
		if boleto.Status != PaymentCanceled || pix.Status != PaymentCanceled || pix.PaidAmountCents != 3000 || !bill.needsPayment() {
			t.Fatalf("boleto %s, Pix %s (%d received), the bill needing a payment %v", boleto.Status, pix.Status, pix.PaidAmountCents, bill.needsPayment())
		}
		if got := installmentPayment(c, pc, bill, calSP(2027, 1, 13, 10, 0, 0, 0)).amount; got != 7000 {
			t.Fatalf("the payment issued after the waiver asks %d, want 7000", got)
		}
	})
}

// What is left to pay with a live payment is its own rest, whatever the
// bill owes today, until another payment received part of the bill: a
// late boleto carries its interest to its due date, and its page asked
// the payer for less than its code, which pays nothing less.
func TestLeftToPayWith(t *testing.T) {
	t.Parallel()
	wednesday := calSP(2027, 1, 13, 9, 0, 0, 0) // the boleto is due Monday the 18th
	_, c, bill, boleto, pix := lateInstallment(t)
	if got := bill.LeftToPayWith(boleto, wednesday, c); got != 10227 {
		t.Fatalf("a late boleto nothing paid: %d left, want its amount 10227", got)
	}
	pix.PaidAmountCents = 3000
	if got := bill.LeftToPayWith(pix, wednesday, c); got != 7227 {
		t.Fatalf("the Pix that received 3000: %d left, want 7227", got)
	}
	// On the Wednesday the bill owes 10210 (three days' interest), 3000 of
	// it received.
	if got := bill.LeftToPayWith(boleto, wednesday, c); got != 7210 {
		t.Fatalf("the boleto beside it: %d left, want 7210", got)
	}
	if got := bill.LeftToPayWith(boleto, calSP(2027, 1, 18, 9, 0, 0, 0), c); got != 7227 {
		t.Fatalf("the boleto on its due day: %d left, want 7227", got)
	}
}

// A first bill that received part of its amount and lapses (its payment
// expired) is canceled with its billing and order, and still says what it
// received: the payer's money stays on its payments, for the seller to
// refund.
func TestLapsedFirstBillKeepsWhatItReceived(t *testing.T) {
	t.Parallel()
	o, c := chargedOrder(3)
	b := o.Billings[0]
	bill := b.Bills[0]
	p := bill.Payments[0]
	p.PaidAmountCents = 9000
	m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
	if _, err := m.expire(o, b, bill, p, c); err != nil {
		t.Fatal(err)
	}
	if o.Status != OrderCanceled || bill.Status != BillCanceled || p.Status != PaymentExpired || bill.ReceivedInAll() != 9000 {
		t.Fatalf("order %s, bill %s, payment %s, received %d", o.Status, bill.Status, p.Status, bill.ReceivedInAll())
	}
	f := NewBillEndpointForm(bill, c, moveNow, Links{})
	if f.ReceivedAmountCents != 9000 {
		t.Fatalf("the canceled bill says it received %d", f.ReceivedAmountCents)
	}
}

// A bill is late after the later of its effective due date and its
// waiver, and only a late bill turns overdue: the sweep's decision, not
// only its selection, leaves a waived bill pending (an audit).
func TestWaivedBillIsNotOverdueBeforeTheWaiverEnds(t *testing.T) {
	c := NewCompany("Escola", "11222333000181", "escola")
	due := time.Date(2027, time.March, 10, 23, 59, 59, 999_000_000, SaoPaulo) // a Wednesday
	boleto := &Payment{Method: MethodBoleto, Status: PaymentUnpaid, AmountCents: 30000,
		CreatedAt: due.AddDate(0, 0, -10), ExpiresAt: BoletoExpiry(due, 1)}
	waiver := time.Date(2027, time.March, 20, 0, 0, 0, 0, SaoPaulo)
	bill := &Bill{Type: BillTypeInstallment, Status: BillPending, AmountCents: 30000, DueDate: due,
		EffectiveDueDate: EffectiveDueDate(due), DisablePenaltiesUntil: &waiver,
		Payments: []*Payment{boleto}, Billing: &Billing{Status: BillingActive}}
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2027, time.March, 12, 9, 0, 0, 0, SaoPaulo), false},
		{waiver.Add(-time.Millisecond), false},
		{waiver, true},
	} {
		b := *bill
		moved, err := newMover(Auth{}, tc.at, Links{}).markOverdue(&b, &c)
		if err != nil {
			t.Fatal(err)
		}
		if moved != tc.want {
			t.Errorf("at %v, waived until %v: moved to overdue %v, want %v", tc.at, waiver, moved, tc.want)
		}
	}
}
