package parcela

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRecordCard(t *testing.T) {
	t.Parallel()
	approved := CardDecision{Approved: true, AuthorizationID: "SIM1"}
	tests := []struct {
		name       string
		bills      int
		paidBefore bool // the bill was paid before the decision was recorded
		decision   CardDecision
		wantStatus string
		wantVoid   bool
		wantEvents []string
		wantMoves  []string // payment moves: id from→to
	}{
		{name: "refused down payment", bills: 3, decision: CardDecision{RefusedReason: RefusedInsufficientFunds},
			wantStatus: PaymentRefused},
		{name: "refusal of an unknown reason", bills: 3, decision: CardDecision{RefusedReason: "lost_card"}, wantStatus: PaymentRefused},
		{name: "approved down payment", bills: 3, decision: approved, wantStatus: PaymentPaid,
			wantEvents: []string{"bill bill0 paid", "billing billing active"}, wantMoves: []string{"payment0 unpaid→canceled"}},
		{name: "approved upfront bill", bills: 1, decision: approved, wantStatus: PaymentPaid,
			wantEvents: []string{"bill bill0 paid", "billing billing finished", "order order finished"}, wantMoves: []string{"payment0 unpaid→canceled"}},
		{name: "approved for a bill paid meanwhile", bills: 3, paidBefore: true, decision: approved, wantStatus: PaymentCanceled, wantVoid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, c := chargedOrder(tt.bills)
			b := o.Billings[0]
			bill := b.Bills[0]
			if tt.paidBefore {
				bill.Status, bill.Payments[0].Status = BillPaid, PaymentPaid
			}
			p := newCardAttempt(bill, CardSummary{Brand: BrandVisa, LastFour: "1111"}, 2, 10000, moveNow.Add(-time.Minute))
			m := newMover(Auth{CompanyID: c.ID, Environment: Sandbox}, moveNow, Links{PublicURL: "https://x"})
			void, err := m.recordCard(o, b, bill, p, c, tt.decision)
			if err != nil {
				t.Fatal(err)
			}
			ch := m.change()
			if void != tt.wantVoid || p.Status != tt.wantStatus {
				t.Fatalf("void %v, payment %s; want %v, %s", void, p.Status, tt.wantVoid, tt.wantStatus)
			}
			if len(ch.NewPayments) != 1 || ch.NewPayments[0] != p || bill.Payments[len(bill.Payments)-1] != p {
				t.Fatalf("the attempt is not the change's one new payment of the bill: %v", ch.NewPayments)
			}
			if len(ch.Billings) != 1 || ch.Billings[0].From != BillingWaitingPayment || ch.Billings[0].Version != 7 {
				t.Fatalf("billing guard %+v", ch.Billings)
			}
			if got := eventNames(ch); !slices.Equal(got, tt.wantEvents) {
				t.Fatalf("events %v, want %v", got, tt.wantEvents)
			}
			var moves []string
			for _, pm := range ch.Payments {
				moves = append(moves, pm.Payment.ID+" "+pm.From+"→"+pm.Payment.Status)
			}
			if !slices.Equal(moves, tt.wantMoves) {
				t.Fatalf("payment moves %v, want %v (the new payment is inserted, never updated)", moves, tt.wantMoves)
			}
			switch tt.wantStatus {
			case PaymentPaid:
				if p.PaidAmountCents != 10000 || p.PaidAt == nil || !p.PaidAt.Equal(p.CreatedAt) || bill.Status != BillPaid {
					t.Fatalf("paid %d at %v, bill %s", p.PaidAmountCents, p.PaidAt, bill.Status)
				}
			case PaymentRefused:
				if p.RefusedReason == nil || p.RefusedReasonDescription == nil || RefusedReasons[*p.RefusedReason] != *p.RefusedReasonDescription ||
					p.PaidAmountCents != 0 || bill.Status != BillPending || len(ch.Bills) != 0 {
					t.Fatalf("refused %v %v, paid %d, bill %s", p.RefusedReason, p.RefusedReasonDescription, p.PaidAmountCents, bill.Status)
				}
			}
			if p.Card == nil || p.Card.LastFour != "1111" || p.Installments != 2 || p.Method != MethodCreditCard {
				t.Fatalf("card %+v in %d installments by %s", p.Card, p.Installments, p.Method)
			}
		})
	}
}

func TestLapsed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(o *Order)
		at     time.Duration // after the first bill's due date
		lapsed bool
	}{
		{name: "before its due date, no payment", setup: noPayments, at: -time.Second},
		{name: "at its due date, no payment", setup: noPayments, lapsed: true},
		{name: "a live payment keeps it", setup: func(o *Order) { o.Billings[0].Bills[0].Payments[0].ExpiresAt = moveNow.Add(time.Hour) }},
		{name: "an unpaid payment past its expiry does not", setup: func(*Order) {}, at: time.Second, lapsed: true},
		{name: "a refused card does not", setup: func(o *Order) { o.Billings[0].Bills[0].Payments[0].Status = PaymentRefused }, lapsed: true},
		{name: "a paid bill", setup: func(o *Order) { o.Billings[0].Bills[0].Status = BillPaid }, at: time.Hour},
		{name: "an active billing", setup: func(o *Order) { noPayments(o); o.Billings[0].Status = BillingActive }, at: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, _ := chargedOrder(3)
			tt.setup(o)
			bill := o.Billings[0].Bills[0]
			now := bill.DueDate.Add(tt.at)
			if got := bill.lapsed(now); got != tt.lapsed {
				t.Fatalf("lapsed = %v, want %v", got, tt.lapsed)
			}
			if got := o.Billings[0].Bills[1].lapsed(now.AddDate(1, 0, 0)); got {
				t.Fatal("an installment lapsed")
			}
			want := ""
			if tt.lapsed {
				want = NotPayableFirstBillLapsed
			}
			if r := bill.NotPayableAt(now); r != want && bill.NotPayable() == "" {
				t.Fatalf("NotPayableAt = %q, want %q", r, want)
			}
		})
	}
}

func noPayments(o *Order) { o.Billings[0].Bills[0].Payments = nil }

func TestExpireLeavesABillPaidByAnotherLivePayment(t *testing.T) {
	t.Parallel()
	// A boleto of a first bill lives past its expires_at until the bank's
	// notice of its last day has surely come (BoletoNoticeDeadline): at
	// its expiry it is live, a week after it no longer.
	for _, otherExpires := range []time.Duration{time.Hour, 0, -7 * 24 * time.Hour} {
		o, c := chargedOrder(3)
		b := o.Billings[0]
		bill := b.Bills[0]
		other := &Payment{ID: "boleto", BillID: bill.ID, Method: MethodBoleto, Status: PaymentUnpaid, AmountCents: 10000, ExpiresAt: moveNow.Add(otherExpires)}
		bill.Payments = append(bill.Payments, other)
		m := newMover(Auth{CompanyID: c.ID, Environment: Sandbox}, moveNow, Links{})
		reissue, err := m.expire(o, b, bill, bill.Payments[0], c)
		if err != nil || reissue {
			t.Fatalf("reissue %v, %v", reissue, err)
		}
		live := otherExpires >= 0
		if live && (b.Status != BillingWaitingPayment || other.Status != PaymentUnpaid || len(m.c.Events) != 0) {
			t.Fatalf("with a live boleto: billing %s, boleto %s, events %v", b.Status, other.Status, eventNames(m.change()))
		}
		if !live && (b.Status != BillingCanceled || o.Status != OrderCanceled || *o.CancelationReason != ReasonExpired) {
			t.Fatalf("with an expired boleto: billing %s, order %s", b.Status, o.Status)
		}
	}
}

func TestCheckMethod(t *testing.T) {
	t.Parallel()
	o, _ := chargedOrder(3)
	pc := o.Billings[0].PaymentConfiguration
	pc.AllowedDownPaymentMethods = []string{MethodPix, MethodCreditCard}
	down, installment := o.Billings[0].Bills[0], o.Billings[0].Bills[1]
	for _, tt := range []struct {
		bill   *Bill
		method string
		ok     bool
	}{
		{down, MethodPix, true}, {down, MethodCreditCard, true}, {down, MethodBoleto, false},
		{installment, MethodBoleto, true}, {installment, MethodPix, false}, {installment, MethodCreditCard, false},
	} {
		err := checkMethod(pc, tt.bill, tt.method)
		if (err == nil) != tt.ok || err != nil && (ErrorCode(err) != EINVALID || err.(*Error).Fields[0].Code != "not_allowed") {
			t.Errorf("bill %d by %s: %v", tt.bill.Number, tt.method, err)
		}
	}
}

func TestAccessCodes(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		c := accessCode()
		if len(c) != 26 || strings.Trim(c, codeAlphabet) != "" || seen[c] {
			t.Fatalf("access code %q (seen %v)", c, seen[c])
		}
		seen[c] = true
	}
	if k := (PayerKey{}); k.opens("") {
		t.Fatal("an empty code opens a page with none")
	}
	if k := (PayerKey{Code: "ABC"}); !k.opens("ABC") || k.opens("ABD") || k.opens("AB") || k.opens("abc") {
		t.Fatal("codes compare wrong")
	}
}

// A first bill charged by boleto stays payable past its due instant, until
// the end of the boleto's last payable day. A Pix asked for on its
// checkout then is good until that day's end, its last millisecond
// included (it expires the millisecond after): expiring at the due
// instant, it expired before it was issued.
func TestDemandPaymentFirstBillPixAfterItsDueInstant(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	pc := &PaymentConfiguration{PaymentType: Financed, AllowedDownPaymentMethods: []string{MethodBoleto, MethodPix}}
	due := calSP(2026, time.March, 7, 14, 0, 0, 0) // a Saturday: the boleto is payable all Monday the 9th
	bill := &Bill{Type: BillTypeDownPayment, Status: BillPending, AmountCents: 30000, DueDate: due, EffectiveDueDate: BoletoPayableUntil(due)}
	tests := []struct {
		name        string
		now         time.Time
		wantDue     time.Time
		wantExpires time.Time
	}{
		{"before its due instant: with the boleto's last payable day, as the page says", calSP(2026, time.March, 7, 9, 0, 0, 0), calEndOfDay(2026, time.March, 9), calSP(2026, time.March, 10, 0, 0, 0, 0)},
		{"at its due instant", due, calEndOfDay(2026, time.March, 9), calSP(2026, time.March, 10, 0, 0, 0, 0)},
		{"on Sunday", calSP(2026, time.March, 8, 10, 0, 0, 0), calEndOfDay(2026, time.March, 9), calSP(2026, time.March, 10, 0, 0, 0, 0)},
		{"the last minute of Monday", calSP(2026, time.March, 9, 23, 59, 0, 0), calEndOfDay(2026, time.March, 9), calSP(2026, time.March, 10, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		o := demandPayment(&c, pc, bill, MethodPix, tt.now)
		if o.method != MethodPix || o.amount != 30000 || !o.expires.Equal(tt.wantExpires) || !o.due.Equal(tt.wantDue) {
			t.Errorf("%s: %s of %d cents, due %v, expires %v; want a Pix of 30000 due %v, expiring %v",
				tt.name, o.method, o.amount, o.due, o.expires, tt.wantDue, tt.wantExpires)
		}
		if !o.expires.After(tt.now) {
			t.Errorf("%s: a Pix issued at %v expires at %v", tt.name, tt.now, o.expires)
		}
	}
	// A bill charged by Pix or card is payable until its due instant
	// exactly: a Pix asked for before it expires then.
	exact := *bill
	exact.EffectiveDueDate = due
	if o := demandPayment(&c, pc, &exact, MethodPix, calSP(2026, time.March, 7, 9, 0, 0, 0)); !o.due.Equal(due) || !o.expires.Equal(due) {
		t.Errorf("a Pix for a bill due at its instant, asked for before it: due %v, expires %v; want both %v", o.due, o.expires, due)
	}
	// A boleto keeps the charge's expiry, and its due date on the due day;
	// asked for on a later day (Sunday), it is due on its last payable
	// day, the Monday: a bank registers no boleto due before its issue,
	// and it was due on the Saturday already past (an audit).
	for now, wantDue := range map[time.Time]time.Time{
		calSP(2026, time.March, 7, 15, 0, 0, 0):  due,
		calSP(2026, time.March, 8, 10, 0, 0, 0):  calEndOfDay(2026, time.March, 9),
		calSP(2026, time.March, 9, 23, 59, 0, 0): calEndOfDay(2026, time.March, 9),
	} {
		o := demandPayment(&c, pc, bill, MethodBoleto, now)
		if o.amount != 30000 || !o.due.Equal(wantDue) || !o.expires.Equal(BoletoExpiry(due, c.BoletoGraceBusinessDays)) {
			t.Errorf("boleto asked for at %v: %d cents due %v, expires %v; want due %v", now, o.amount, o.due, o.expires, wantDue)
		}
	}
}

// A first bill whose boleto received part of its amount (a partial
// settlement) owes only the rest: a Pix asked for on its checkout (or a
// boleto, once none is live) is for the rest, as a card attempt is, so
// the part received is not paid twice.
func TestDemandPaymentFirstBillOwesWhatItDidNotReceive(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	pc := &PaymentConfiguration{PaymentType: Financed, AllowedDownPaymentMethods: []string{MethodBoleto, MethodPix}}
	due := calSP(2026, time.March, 10, 14, 0, 0, 0)
	now := calSP(2026, time.March, 9, 9, 0, 0, 0)
	bill := &Bill{Type: BillTypeDownPayment, Status: BillPending, AmountCents: 30000, DueDate: due, EffectiveDueDate: due}
	bill.Payments = []*Payment{{ID: "boleto", Method: MethodBoleto, Status: PaymentUnpaid, AmountCents: 30000, PaidAmountCents: 12345,
		CreatedAt: now.Add(-24 * time.Hour), ExpiresAt: BoletoExpiry(due, c.BoletoGraceBusinessDays)}}
	for _, method := range []string{MethodPix, MethodBoleto} {
		if o := demandPayment(&c, pc, bill, method, now); o.amount != 30000-12345 {
			t.Errorf("%s of %d cents for a bill of 30000 that received 12345", method, o.amount)
		}
	}
}
