package parcela

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"parcela/brcode"
)

func TestCanMove(t *testing.T) {
	t.Parallel()
	statuses := map[string][]string{
		"order":   {OrderPending, OrderInProgress, OrderFinished, OrderCanceled},
		"billing": {BillingWaitingPayment, BillingActive, BillingFinished, BillingCanceled},
		"bill":    {BillPending, BillPaid, BillOverdue, BillCanceled},
		"payment": {PaymentUnpaid, PaymentPaid, PaymentExpired, PaymentCanceled},
	}
	allowed := map[string][]string{
		"order pending→in_progress": nil, "order pending→canceled": nil, "order in_progress→finished": nil, "order in_progress→canceled": nil,
		"billing waiting_payment→active": nil, "billing waiting_payment→finished": nil, "billing waiting_payment→canceled": nil,
		"billing active→finished": nil, "billing active→canceled": nil,
		"bill pending→paid": nil, "bill pending→overdue": nil, "bill pending→canceled": nil, "bill overdue→paid": nil, "bill overdue→canceled": nil,
		"payment unpaid→paid": nil, "payment unpaid→expired": nil, "payment unpaid→canceled": nil,
		// A bank's notice of money taken on a code before it closed.
		"payment expired→paid": nil, "payment canceled→paid": nil,
	}
	for entity, ss := range statuses {
		for _, from := range ss {
			for _, to := range ss {
				move := entity + " " + from + "→" + to
				_, want := allowed[move]
				if got := CanMove(entity, from, to); got != want {
					t.Errorf("%s: CanMove = %v, want %v", move, got, want)
				}
			}
		}
	}
	if CanMove("offer", "enabled", "disabled") {
		t.Error("an unknown entity moves")
	}
}

var moveNow = time.Date(2026, 12, 1, 10, 0, 0, 0, SaoPaulo)

// chargedOrder is an in_progress order with one billing of n bills (the
// first a down payment), each with one unpaid payment, as the store reads it.
func chargedOrder(n int) (*Order, *Company) {
	c := NewCompany("Escola", "11222333000181", "escola")
	c.ID = "company"
	pc := &PaymentConfiguration{ID: "pc", PaymentType: Financed, PaymentMethods: []string{MethodBoleto}}
	if n == 1 {
		pc.PaymentType = Upfront
	}
	b := &Billing{ID: "billing", CompanyID: c.ID, OrderID: "order", Status: BillingWaitingPayment, Installments: n, Version: 7, PaymentConfiguration: pc}
	for i := range n {
		typ := BillTypeInstallment
		if i == 0 {
			typ = BillTypeDownPayment
		}
		due := moveNow.AddDate(0, i, 0)
		bill := &Bill{ID: "bill" + string(rune('0'+i)), CompanyID: c.ID, BillingID: b.ID, OrderID: "order", Number: i, Type: typ,
			Status: BillPending, AmountCents: 10000, DueDate: due, EffectiveDueDate: due}
		bill.Payments = []*Payment{{ID: "payment" + string(rune('0'+i)), BillID: bill.ID, Status: PaymentUnpaid, AmountCents: 10000, ExpiresAt: due}}
		b.Bills = append(b.Bills, bill)
	}
	o := &Order{ID: "order", CompanyID: c.ID, Status: OrderInProgress, Billings: []*Billing{b},
		Offer: &Offer{ID: "offer", Product: &Product{ID: "product", Availability: "enabled", Company: &c}, PaymentConfigurations: []*PaymentConfiguration{pc}}}
	o.linkBills()
	return o, &c
}

func eventNames(c *Change) []string {
	var out []string
	for _, e := range c.Events {
		out = append(out, e.Entity+" "+e.EntityID+" "+e.Event)
	}
	return out
}

func TestPayDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		bills        int
		paid         []int // bills paid before
		pay          int
		wantEvents   []string
		wantBilling  string
		wantOrder    string
		wantFinished bool
	}{
		{"upfront finishes billing and order", 1, nil, 0,
			[]string{"bill bill0 paid", "billing billing finished", "order order finished"}, BillingFinished, OrderFinished, true},
		{"down payment activates the billing", 3, nil, 0,
			[]string{"bill bill0 paid", "billing billing active"}, BillingActive, OrderInProgress, false},
		{"a middle installment moves nothing else", 3, []int{0}, 1,
			[]string{"bill bill1 paid"}, BillingActive, OrderInProgress, false},
		{"the last bill finishes billing and order", 3, []int{0, 1}, 2,
			[]string{"bill bill2 paid", "billing billing finished", "order order finished"}, BillingFinished, OrderFinished, true},
		{"the last bill out of order still finishes", 3, []int{0, 2}, 1,
			[]string{"bill bill1 paid", "billing billing finished", "order order finished"}, BillingFinished, OrderFinished, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := chargedOrder(tt.bills)
			b := o.Billings[0]
			for _, i := range tt.paid {
				b.Bills[i].Status, b.Bills[i].Payments[0].Status = BillPaid, PaymentPaid
				b.Status = BillingActive
			}
			bill := b.Bills[tt.pay]
			extra := &Payment{ID: "extra", BillID: bill.ID, Status: PaymentUnpaid}
			bill.Payments = append(bill.Payments, extra)
			wasBilling := b.Status
			bill.Payments[0].ExpiresAt = moveNow.Add(time.Hour) // still live
			m := newMover(Auth{CompanyID: c.ID, Environment: Sandbox}, moveNow, Links{PublicURL: "https://p.test"})
			if err := m.pay(o, b, bill, bill.Payments[0], c, Settlement{}); err != nil {
				t.Fatal(err)
			}
			ch := m.change()
			if got := eventNames(ch); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events %v, want %v", got, tt.wantEvents)
			}
			// The bill's event is the bill as its GET answers once the change
			// commits: its billing moved on too.
			want, err := json.Marshal(NewBillEndpointForm(bill, c, moveNow, m.links))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(ch.Events[0].Data); got != string(want) {
				t.Errorf("bill event\n%s\nwant\n%s", got, want)
			}
			if b.Status != tt.wantBilling || o.Status != tt.wantOrder || (b.FinishedAt != nil) != tt.wantFinished {
				t.Errorf("billing %s (finished %v), order %s", b.Status, b.FinishedAt, o.Status)
			}
			if p := bill.Payments[0]; p.Status != PaymentPaid || p.PaidAmountCents != 10000 || !p.PaidAt.Equal(moveNow) || extra.Status != PaymentCanceled {
				t.Errorf("payments %+v, other %s", p, extra.Status)
			}
			// The change is guarded by the billing as read, and every row it moves by its status as read.
			if len(ch.Billings) != 1 || ch.Billings[0].Version != 7 || ch.Billings[0].From != wasBilling {
				t.Errorf("billing guard %+v", ch.Billings)
			}
			if len(ch.Bills) != 1 || ch.Bills[0].From != BillPending || len(ch.Payments) != 2 || ch.Payments[0].From != PaymentUnpaid {
				t.Errorf("bill and payment guards %+v %+v", ch.Bills, ch.Payments)
			}
			if (ch.Order != nil) != tt.wantFinished || (ch.Order != nil && ch.Order.From != OrderInProgress) {
				t.Errorf("order guard %+v", ch.Order)
			}
		})
	}
}

func TestPayLateBillChargesPenalties(t *testing.T) {
	t.Parallel()
	o, c := chargedOrder(2)
	b := o.Billings[0]
	b.Status, b.Bills[0].Status = BillingActive, BillPaid
	bill := b.Bills[1]
	bill.Status, bill.DueDate, bill.EffectiveDueDate = BillOverdue, moveNow.AddDate(0, 0, -30), moveNow.AddDate(0, 0, -30)
	// Its boleto carries that due date: paid after it, the bank collects
	// the bill's fine and interest.
	boleto := brcode.Boleto{BankCode: "001", CurrencyCode: '9', DueDate: bill.EffectiveDueDate.In(SaoPaulo), AmountCents: 10000, FreeField: strings.Repeat("0", 25)}
	linha, err := boleto.LinhaDigitavel()
	if err != nil {
		t.Fatal(err)
	}
	p := bill.Payments[0]
	p.Method, p.Barcode, p.CreatedAt = MethodBoleto, &linha, bill.EffectiveDueDate.AddDate(0, 0, -10)
	m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
	if err := m.pay(o, b, bill, bill.Payments[0], c, Settlement{}); err != nil {
		t.Fatal(err)
	}
	// A 2% fine and 1% a month for 30 days on 10000 cents.
	if got := bill.Payments[0].PaidAmountCents; got != 10300 {
		t.Fatalf("paid %d, want 10300", got)
	}
	// A settlement of the whole amount at an earlier paid_at is kept as given.
	given, at := int64(10000), moveNow.Add(-time.Hour)
	o, c = chargedOrder(2)
	b = o.Billings[0]
	m = newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
	if err := m.pay(o, b, b.Bills[0], b.Bills[0].Payments[0], c, Settlement{PaidAt: &at, PaidAmountCents: &given}); err != nil {
		t.Fatal(err)
	}
	if p := b.Bills[0].Payments[0]; p.PaidAmountCents != 10000 || !p.PaidAt.Equal(at) || !b.Bills[0].PaidAt.Equal(at) {
		t.Fatalf("settlement not kept: %+v", p)
	}
}

func TestSettlementMustMatch(t *testing.T) {
	t.Parallel()
	cents := func(n int64) *int64 { return &n }
	at := func(d time.Duration) *time.Time { t := moveNow.Add(d); return &t }
	issued := moveNow.Add(-48 * time.Hour)
	tests := []struct {
		name        string
		before      int64 // received by earlier settlements
		s           Settlement
		wantErr     []string // fields refused
		wantPaid    bool
		wantAmount  int64 // the payment's paid amount after
		wantBilling string
	}{
		{"the whole amount pays", 0, Settlement{PaidAmountCents: cents(10000)}, nil, true, 10000, BillingActive},
		{"more than the amount pays", 0, Settlement{PaidAmountCents: cents(10500)}, nil, true, 10500, BillingActive},
		{"less is recorded and pays nothing", 0, Settlement{PaidAmountCents: cents(9999)}, nil, false, 9999, BillingWaitingPayment},
		{"the rest of an earlier partial settlement pays", 4000, Settlement{PaidAmountCents: cents(6000)}, nil, true, 10000, BillingActive},
		{"another partial settlement adds up", 4000, Settlement{PaidAmountCents: cents(5000)}, nil, false, 9000, BillingWaitingPayment},
		{"by default the rest is paid", 4000, Settlement{}, nil, true, 10000, BillingActive},
		{"paid when it was issued", 0, Settlement{PaidAt: &issued}, nil, true, 10000, BillingActive},
		{"paid before it was issued", 0, Settlement{PaidAt: at(-48*time.Hour - time.Millisecond)}, []string{"paid_at"}, false, 0, BillingWaitingPayment},
		{"paid in the future", 0, Settlement{PaidAt: at(time.Hour + time.Second)}, []string{"paid_at"}, false, 0, BillingWaitingPayment},
		// Paid up to the last millisecond before it expired, the notice
		// arriving after: kept.
		{"paid just before it expired", 0, Settlement{PaidAt: at(-time.Millisecond)}, nil, true, 10000, BillingActive},
		{"paid as it expired", 0, Settlement{PaidAt: at(0)}, []string{"paid_at"}, false, 0, BillingWaitingPayment},
		{"no money", 0, Settlement{PaidAmountCents: cents(0)}, []string{"paid_amount_cents"}, false, 0, BillingWaitingPayment},
		{"an amount that would overflow", 4000, Settlement{PaidAmountCents: cents(math.MaxInt64)}, []string{"paid_amount_cents"}, false, 4000, BillingWaitingPayment},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := chargedOrder(3)
			b := o.Billings[0]
			bill := b.Bills[0]
			p := bill.Payments[0]
			p.CreatedAt, p.PaidAmountCents = issued, tt.before
			m := newMover(Auth{CompanyID: c.ID}, moveNow.Add(time.Hour), Links{}) // the bank's notice, an hour after
			if tt.s.PaidAt == nil {
				m = newMover(Auth{CompanyID: c.ID}, moveNow.Add(-time.Millisecond), Links{})
			}
			err := m.pay(o, b, bill, p, c, tt.s)
			if tt.wantErr != nil {
				e, ok := err.(*Error)
				if !ok || e.Code != EINVALID || len(e.Fields) != len(tt.wantErr) || e.Fields[0].Field != tt.wantErr[0] {
					t.Fatalf("err %v, want a validation error on %v", err, tt.wantErr)
				}
				if p.PaidAmountCents != tt.wantAmount || m.change() != nil {
					t.Fatalf("a refused settlement changed the payment: %+v", p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ch := m.change()
			if p.PaidAmountCents != tt.wantAmount || (p.Status == PaymentPaid) != tt.wantPaid || (bill.Status == BillPaid) != tt.wantPaid || b.Status != tt.wantBilling {
				t.Fatalf("payment %s with %d, bill %s, billing %s", p.Status, p.PaidAmountCents, bill.Status, b.Status)
			}
			if p.PaidAt == nil || (bill.PaidAt != nil) != tt.wantPaid {
				t.Fatalf("payment paid_at %v, bill paid_at %v", p.PaidAt, bill.PaidAt)
			}
			// Even a partial settlement is a guarded change of the payment and its billing, without events.
			if len(ch.Payments) == 0 || ch.Payments[0].From != PaymentUnpaid || len(ch.Billings) != 1 || ch.Billings[0].Version != 7 {
				t.Fatalf("guards %+v %+v", ch.Payments, ch.Billings)
			}
			if !tt.wantPaid && len(ch.Events) != 0 {
				t.Fatalf("a partial settlement wrote events %v", eventNames(ch))
			}
		})
	}
}

func TestExpireDecisions(t *testing.T) {
	t.Parallel()
	t.Run("down payment cancels billing and order", func(t *testing.T) {
		o, c := chargedOrder(3)
		b := o.Billings[0]
		m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
		reissue, err := m.expire(o, b, b.Bills[0], b.Bills[0].Payments[0], c)
		if err != nil || reissue {
			t.Fatal(reissue, err)
		}
		want := []string{"bill bill0 canceled", "bill bill1 canceled", "bill bill2 canceled", "billing billing canceled", "order order canceled"}
		if got := eventNames(m.change()); !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		if b.Bills[0].Payments[0].Status != PaymentExpired || b.Bills[1].Payments[0].Status != PaymentCanceled {
			t.Fatal("payments not expired and canceled")
		}
		if *b.CancelationReason != "down_payment_not_paid" || *o.CancelationReason != ReasonExpired {
			t.Fatalf("reasons %s %s", *b.CancelationReason, *o.CancelationReason)
		}
	})
	t.Run("installment boleto is re-issued", func(t *testing.T) {
		o, c := chargedOrder(3)
		b := o.Billings[0]
		b.Status, b.Bills[0].Status = BillingActive, BillPaid
		m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
		reissue, err := m.expire(o, b, b.Bills[1], b.Bills[1].Payments[0], c)
		if err != nil || !reissue {
			t.Fatal(reissue, err)
		}
		ch := m.change()
		if len(ch.Events) != 0 || len(ch.Billings) != 1 || b.Bills[1].Status != BillPending {
			t.Fatalf("change %+v", ch)
		}
	})
	for _, status := range []string{PaymentPaid, PaymentExpired, PaymentCanceled} {
		t.Run("a "+status+" payment does not expire", func(t *testing.T) {
			o, c := chargedOrder(2)
			b := o.Billings[0]
			b.Bills[0].Payments[0].Status = status
			m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
			if _, err := m.expire(o, b, b.Bills[0], b.Bills[0].Payments[0], c); ErrorCode(err) != EINVALIDSTATE {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestCancelDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		order       string
		billing     string
		wantErr     string
		wantEvents  []string
		wantBilling string
	}{
		{"pending order without billing", OrderPending, "", "", []string{"order order canceled"}, ""},
		{"in-progress order cancels its open billing", OrderInProgress, BillingActive, "",
			[]string{"bill bill1 canceled", "billing billing canceled", "order order canceled"}, BillingCanceled},
		{"finished order", OrderFinished, BillingFinished, EINVALIDSTATE, nil, BillingFinished},
		{"canceled order", OrderCanceled, BillingCanceled, EINVALIDSTATE, nil, BillingCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := chargedOrder(2)
			if tt.billing == "" {
				o.Billings = nil
			} else {
				b := o.Billings[0]
				b.Status, b.Bills[0].Status, b.Bills[0].Payments[0].Status = tt.billing, BillPaid, PaymentPaid
			}
			o.Status = tt.order
			m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
			err := m.cancelOrder(o, "customer_dropout", c)
			if ErrorCode(err) != tt.wantErr {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got := eventNames(m.change()); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events %v, want %v", got, tt.wantEvents)
			}
			if len(o.Billings) > 0 && (o.Billings[0].Status != tt.wantBilling || o.Billings[0].Bills[0].Status != BillPaid) {
				t.Errorf("billing %s, paid bill %s", o.Billings[0].Status, o.Billings[0].Bills[0].Status)
			}
		})
	}
	// A billing canceled on its own takes its order with it, with the same reason.
	o, c := chargedOrder(2)
	m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
	if err := m.cancelBillingAndOrder(o, o.Billings[0], "refunded_by_company", c); err != nil {
		t.Fatal(err)
	}
	if o.Status != OrderCanceled || *o.CancelationReason != "refunded_by_company" || *o.Billings[0].CancelationReason != "refunded_by_company" {
		t.Fatalf("order %s", o.Status)
	}
	m = newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
	if err := m.cancelBillingAndOrder(o, o.Billings[0], "refunded_by_company", c); ErrorCode(err) != EINVALIDSTATE {
		t.Fatalf("canceling a canceled billing: %v", err)
	}
}

func TestMarkOverdueDecision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		bill    int
		status  string
		due     time.Time
		billing string
		payment string    // the bill's payment's status; "" for none
		issued  time.Time // when the payment was created
		expires time.Time
		want    bool
	}{
		{"pending installment past its effective due date", 1, BillPending, moveNow.Add(-time.Minute), BillingActive, PaymentUnpaid, moveNow.AddDate(0, 0, -10), moveNow.Add(time.Hour), true},
		{"not yet due", 1, BillPending, moveNow.Add(time.Minute), BillingActive, PaymentUnpaid, moveNow.AddDate(0, 0, -10), moveNow.Add(time.Hour), false},
		{"down payments expire instead", 0, BillPending, moveNow.Add(-time.Minute), BillingActive, PaymentUnpaid, moveNow.AddDate(0, 0, -10), moveNow.Add(time.Hour), false},
		{"already overdue", 1, BillOverdue, moveNow.Add(-time.Minute), BillingActive, PaymentUnpaid, moveNow.AddDate(0, 0, -10), moveNow.Add(time.Hour), false},
		{"paid", 1, BillPaid, moveNow.Add(-time.Minute), BillingActive, PaymentPaid, moveNow.AddDate(0, 0, -10), moveNow.Add(time.Hour), false},
		{"the billing still waits for its down payment", 1, BillPending, moveNow.Add(-time.Minute), BillingWaitingPayment, PaymentUnpaid, moveNow.AddDate(0, 0, -10), moveNow.Add(time.Hour), false},
		{"no payment to pay with", 1, BillPending, moveNow.Add(-time.Minute), BillingActive, "", time.Time{}, time.Time{}, false},
		{"only an expired payment", 1, BillPending, moveNow.Add(-time.Minute), BillingActive, PaymentExpired, moveNow.AddDate(0, 0, -10), moveNow.Add(-time.Second), false},
		{"first issued after the due date, before it expires", 1, BillPending, moveNow.AddDate(0, 0, -5), BillingActive, PaymentUnpaid, moveNow.AddDate(0, 0, -1), moveNow.Add(time.Hour), false},
		{"first issued after the due date, after it expired", 1, BillPending, moveNow.AddDate(0, 0, -5), BillingActive, PaymentUnpaid, moveNow.AddDate(0, 0, -4), moveNow.Add(-time.Hour), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := chargedOrder(2)
			o.Billings[0].Status = tt.billing
			bill := o.Billings[0].Bills[tt.bill]
			bill.Status, bill.EffectiveDueDate = tt.status, tt.due
			bill.Payments[0].Status, bill.Payments[0].CreatedAt, bill.Payments[0].ExpiresAt = tt.payment, tt.issued, tt.expires
			if tt.payment == "" {
				bill.Payments = nil
			}
			m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
			moved, err := m.markOverdue(bill, c)
			if err != nil || moved != tt.want {
				t.Fatalf("moved %v, %v", moved, err)
			}
			if ch := m.change(); (ch != nil) != tt.want || (moved && (bill.Status != BillOverdue || ch.Billings[0].Version != 7)) {
				t.Fatalf("change %+v", ch)
			}
		})
	}
}

func TestPenaltyNeedsAnIssuedPayment(t *testing.T) {
	t.Parallel()
	o, c := chargedOrder(2)
	bill := o.Billings[0].Bills[1]
	bill.Status, bill.DueDate, bill.EffectiveDueDate = BillOverdue, moveNow.AddDate(0, 0, -30), moveNow.AddDate(0, 0, -30)
	bill.Payments[0].CreatedAt = moveNow.AddDate(0, 0, -40)
	if got := bill.Penalty(moveNow, c).Total(bill.AmountCents); got != 10300 {
		t.Fatalf("with an unpaid payment: %d, want 10300", got)
	}
	// Expired with no re-issue yet: the penalty is still owed, as the
	// boleto re-issued next carries it.
	bill.Payments[0].Status = PaymentExpired
	if got := bill.Penalty(moveNow, c).Total(bill.AmountCents); got != 10300 {
		t.Fatalf("without a live payment: %d, want 10300", got)
	}
	bill.Payments = nil
	if got := bill.Penalty(moveNow, c); got != (Penalty{}) {
		t.Fatalf("never issued: %+v", got)
	}
	// Issued only 10 days after its due date, expiring 5 days later: late from then.
	bill.Payments = []*Payment{{ID: "late", Status: PaymentUnpaid, AmountCents: 10000, CreatedAt: moveNow.AddDate(0, 0, -20), ExpiresAt: moveNow.AddDate(0, 0, -15)}}
	if got := bill.Penalty(moveNow, c); got.DaysLate != 15 || got.FineCents != 200 || got.InterestCents != 50 {
		t.Fatalf("late from the first payment's expiry: %+v", got)
	}
}

func TestInstallmentPayment(t *testing.T) {
	t.Parallel()
	bolepix := "bolepix"
	pc := &PaymentConfiguration{ID: "pc", PaymentType: Financed, FinancedType: &bolepix}
	due := calEndOfDay(2027, 1, 10) // a Sunday: payable Monday the 11th, and through Tuesday the 12th, its grace
	tests := []struct {
		name        string
		now         time.Time
		payments    []*Payment
		wantDue     time.Time
		wantAmount  int64
		wantExpires time.Time
	}{
		{"ten days before it is due", calSP(2027, 1, 1, 9, 0, 0, 0), nil, due, 10000, calEndOfDay(2027, 1, 12).Add(time.Millisecond)},
		{"on its due day", calSP(2027, 1, 10, 9, 0, 0, 0), nil, due, 10000, calEndOfDay(2027, 1, 12).Add(time.Millisecond)},
		// Issued on the Monday it is payable through (the issue sweep or
		// the provider late), it is due that Monday, not on the Sunday
		// already past: a bank registers no boleto due before its issue
		// (an audit).
		{"issued the business day its due date moved to", calSP(2027, 1, 11, 9, 0, 0, 0), nil, calEndOfDay(2027, 1, 11), 10000, calEndOfDay(2027, 1, 12).Add(time.Millisecond)},
		// 72 hours on is Saturday 16: due Monday 18, 8 days since Sunday 10.
		{"re-issued the day after its boleto expired, at what it owes on the new due date, a business day",
			calSP(2027, 1, 13, 0, 5, 0, 0), []*Payment{{Status: PaymentExpired, CreatedAt: calSP(2027, 1, 1, 9, 0, 0, 0), ExpiresAt: calEndOfDay(2027, 1, 12).Add(time.Millisecond)}},
			calEndOfDay(2027, 1, 18), 10000 + 200 + 27, calEndOfDay(2027, 1, 19).Add(time.Millisecond)},
		{"re-issued less what its expired boleto received", calSP(2027, 1, 13, 0, 5, 0, 0),
			[]*Payment{{Status: PaymentExpired, PaidAmountCents: 4000, CreatedAt: calSP(2027, 1, 1, 9, 0, 0, 0), ExpiresAt: calEndOfDay(2027, 1, 12).Add(time.Millisecond)}},
			calEndOfDay(2027, 1, 18), 10000 + 200 + 27 - 4000, calEndOfDay(2027, 1, 19).Add(time.Millisecond)},
		{"first issued after its due date: the original amount, due in the company's expiry hours", calSP(2027, 1, 20, 10, 0, 0, 0), nil,
			calEndOfDay(2027, 1, 25), 10000, calEndOfDay(2027, 1, 26).Add(time.Millisecond)},
		// A Pix asked for on the checkout after the due date made the bill
		// late only once it expires; a boleto asked for meanwhile is still
		// due days from now, not on the due date already past (it expired
		// before it was issued).
		{"after a Pix issued past its due date: due in the company's expiry hours", calSP(2027, 1, 21, 10, 0, 0, 0),
			[]*Payment{{Method: MethodPix, Status: PaymentUnpaid, AmountCents: 10000, CreatedAt: calSP(2027, 1, 20, 10, 0, 0, 0), ExpiresAt: calEndOfDay(2027, 1, 25)}},
			calEndOfDay(2027, 1, 25), 10000, calEndOfDay(2027, 1, 26).Add(time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, c := chargedOrder(2)
			bill := o.Billings[0].Bills[1]
			bill.DueDate, bill.EffectiveDueDate, bill.Payments = due, EffectiveDueDate(due), tt.payments
			got := installmentPayment(c, pc, bill, tt.now)
			if !got.due.Equal(tt.wantDue) || got.amount != tt.wantAmount || !got.expires.Equal(tt.wantExpires) || got.method != MethodBoleto || !got.withPix {
				t.Fatalf("due %v, %d cents, expires %v (%s, pix %v); want due %v, %d cents, expires %v",
					got.due, got.amount, got.expires, got.method, got.withPix, tt.wantDue, tt.wantAmount, tt.wantExpires)
			}
		})
	}
}

// A mover refuses a move the rules do not allow, whatever the caller.
func TestMoverRefusesIllegalMoves(t *testing.T) {
	t.Parallel()
	o, c := chargedOrder(2)
	m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
	o.Status = OrderFinished
	if err := m.moveOrder(o, OrderInProgress); err == nil {
		t.Error("finished → in_progress")
	}
	if err := m.moveBill(o.Billings[0].Bills[0], BillPending); err == nil {
		t.Error("pending → pending")
	}
	p := o.Billings[0].Bills[0].Payments[0]
	p.Status = PaymentExpired
	if err := m.movePayment(p, PaymentCanceled); err == nil {
		t.Error("expired → canceled")
	}
	if m.change() != nil {
		t.Error("refused moves left a change")
	}
}

// A Pix or boleto is payable only before its expires_at: the bank takes no
// money for it from then, so a settlement at or after it (the sweep not
// having expired the payment yet) is refused like one of an expired
// payment, and a down payment past it does not start the plan. A card
// attempt is settled as it is made, at its own expiry.
func TestNoSettlementPastTheExpiry(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		now      time.Time
		wantCode string
	}{
		{"the last millisecond", moveNow.Add(-time.Millisecond), ""},
		{"at its expiry", moveNow, EINVALIDSTATE},
		{"a minute after, before the sweep", moveNow.Add(time.Minute), EINVALIDSTATE},
	} {
		o, c := chargedOrder(3) // the down payment's Pix expires at moveNow
		b := o.Billings[0]
		p := b.Bills[0].Payments[0]
		p.Method, p.CreatedAt = MethodPix, moveNow.Add(-time.Hour)
		m := newMover(Auth{CompanyID: c.ID}, tt.now, Links{})
		err := m.pay(o, b, b.Bills[0], p, c, Settlement{})
		if ErrorCode(err) != tt.wantCode {
			t.Fatalf("%s: %v, want %q", tt.name, err, tt.wantCode)
		}
		if paid := p.Status == PaymentPaid; paid != (tt.wantCode == "") || (tt.wantCode != "" && (m.change() != nil || b.Status != BillingWaitingPayment)) {
			t.Fatalf("%s: payment %s, billing %s", tt.name, p.Status, b.Status)
		}
	}
	o, c := chargedOrder(3)
	b := o.Billings[0]
	attempt := newCardAttempt(b.Bills[0], CardSummary{Brand: BrandVisa, LastFour: "1111"}, 1, 10000, moveNow)
	m := newMover(Auth{CompanyID: c.ID}, moveNow, Links{})
	if void, err := m.recordCard(o, b, b.Bills[0], attempt, c, CardDecision{Approved: true}); err != nil || void || attempt.Status != PaymentPaid {
		t.Fatalf("card approved as it expires: %s, void %v, %v", attempt.Status, void, err)
	}
}

// A refused paid_at names the bound to the millisecond, so that a
// settlement at the instant named is taken: the payment issued at
// 10:00:00.732 is not paid at 10:00:00.
func TestSettlementRefusalNamesTheBoundToTheMillisecond(t *testing.T) {
	t.Parallel()
	o, c := chargedOrder(3)
	b := o.Billings[0]
	bill := b.Bills[0]
	p := bill.Payments[0]
	p.CreatedAt = moveNow.Add(-48*time.Hour + 732*time.Millisecond)
	m := newMover(Auth{CompanyID: c.ID}, moveNow.Add(-time.Millisecond), Links{})
	early := p.CreatedAt.Add(-time.Hour)
	err := m.pay(o, b, bill, p, c, Settlement{PaidAt: &early})
	e, ok := err.(*Error)
	if !ok || len(e.Fields) != 1 {
		t.Fatalf("err %v, want a refusal of paid_at", err)
	}
	msg := e.Fields[0].Message
	named, perr := time.Parse(TimestampLayout, msg[strings.LastIndex(msg, "(")+1:len(msg)-1])
	if perr != nil || !named.Equal(p.CreatedAt) {
		t.Fatalf("the refusal %q names %v, want the payment's issue %v (%v)", msg, named, p.CreatedAt, perr)
	}
	if err := m.pay(o, b, bill, p, c, Settlement{PaidAt: &named}); err != nil {
		t.Fatalf("paid at the instant the refusal named: %v", err)
	}
}
