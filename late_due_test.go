package parcela

import (
	"testing"
	"time"
)

// The one rule of a due date on a day banks do not settle: the bill is
// payable without fine or interest through the end of the next business
// day; paid after it, it owes the fine and interest for every calendar
// day since its own due date, as banks charge it. The API's amount, the
// checkout's and the card's (Penalty, Outstanding) and the boleto issued
// next follow it alike.

// installmentDueOn is an installment of 10000 cents due at the end of the
// São Paulo date y-m-d, whose boleto was issued ten days before, live.
func installmentDueOn(y int, m time.Month, d int) *Bill {
	due := calEndOfDay(y, m, d)
	issued := due.AddDate(0, 0, -10)
	return &Bill{Type: BillTypeInstallment, Status: BillPending, AmountCents: 10000, DueDate: due, EffectiveDueDate: EffectiveDueDate(due),
		Payments: []*Payment{{Method: MethodBoleto, Status: PaymentUnpaid, AmountCents: 10000, CreatedAt: issued, ExpiresAt: BoletoExpiry(due, 1)}}}
}

// lateBy is the penalty of 10000 cents days late under the default rates:
// the 2% fine and 1% a month / 30 a day, rounded half-up.
func lateBy(days int64) Penalty {
	return Penalty{FineCents: 200, InterestCents: (100*days + 15) / 30, DaysLate: days}
}

func TestPenaltyOfADueDateBanksDoNotSettle(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	type date struct {
		y int
		m time.Month
		d int
	}
	tests := []struct {
		name      string
		due       date
		effective date // the last day payable without fine or interest
		paid      date // a day after it
		daysLate  int64
	}{
		{"Friday", date{2026, time.March, 6}, date{2026, time.March, 6}, date{2026, time.March, 9}, 3},
		{"Saturday", date{2026, time.March, 7}, date{2026, time.March, 9}, date{2026, time.March, 10}, 3},
		{"Sunday", date{2026, time.March, 8}, date{2026, time.March, 9}, date{2026, time.March, 10}, 2},
		{"Saturday before Carnival", date{2027, time.February, 6}, date{2027, time.February, 10}, date{2027, time.February, 11}, 5},
		{"Carnival Monday", date{2026, time.February, 16}, date{2026, time.February, 18}, date{2026, time.February, 19}, 3},
		{"Good Friday", date{2026, time.April, 3}, date{2026, time.April, 6}, date{2026, time.April, 7}, 4},
		{"Corpus Christi", date{2026, time.June, 4}, date{2026, time.June, 5}, date{2026, time.June, 8}, 4},
		{"Tiradentes", date{2026, time.April, 21}, date{2026, time.April, 22}, date{2026, time.April, 23}, 2},
		{"Consciência Negra", date{2026, time.November, 20}, date{2026, time.November, 23}, date{2026, time.November, 24}, 4},
		{"31 December, paid 2 January", date{2025, time.December, 31}, date{2026, time.January, 2}, date{2026, time.January, 5}, 5},
		{"31 December before a weekend", date{2026, time.December, 31}, date{2027, time.January, 4}, date{2027, time.January, 5}, 5},
		{"28 February on a Sunday", date{2027, time.February, 28}, date{2027, time.March, 1}, date{2027, time.March, 2}, 2},
		{"29 February on a Sunday", date{2032, time.February, 29}, date{2032, time.March, 1}, date{2032, time.March, 2}, 2},
		{"29 February on Carnival Tuesday", date{2028, time.February, 29}, date{2028, time.March, 1}, date{2028, time.March, 2}, 2},
		{"29 February on a Thursday", date{2024, time.February, 29}, date{2024, time.February, 29}, date{2024, time.March, 1}, 1},
	}
	for _, tt := range tests {
		bill := installmentDueOn(tt.due.y, tt.due.m, tt.due.d)
		lastPayable := calEndOfDay(tt.effective.y, tt.effective.m, tt.effective.d)
		if !bill.EffectiveDueDate.Equal(lastPayable) {
			t.Errorf("%s: effective due date %v, want %v", tt.name, bill.EffectiveDueDate, lastPayable)
			continue
		}
		// 23:59:59 of that day in São Paulo is 02:59:59 of the next in UTC:
		// on time; 03:00 UTC is the next São Paulo day, late.
		lastSecondUTC := calSP(tt.effective.y, tt.effective.m, tt.effective.d, 23, 59, 59, 0).UTC()
		for _, now := range []time.Time{calSP(tt.due.y, tt.due.m, tt.due.d, 12, 0, 0, 0), lastPayable, lastSecondUTC} {
			if p, owed := bill.Penalty(now, &c), bill.Outstanding(now, &c); p != (Penalty{}) || owed != 10000 {
				t.Errorf("%s: at %v owes %d (%+v), want 10000 and no penalty", tt.name, now, owed, p)
			}
		}
		firstLate := lastSecondUTC.Add(time.Second)
		if firstLate.Hour() != 3 || firstLate.Location() != time.UTC {
			t.Fatalf("%s: %v", tt.name, firstLate)
		}
		dueDay := time.Date(tt.due.y, tt.due.m, tt.due.d, 0, 0, 0, 0, time.UTC)
		effDay := time.Date(tt.effective.y, tt.effective.m, tt.effective.d, 0, 0, 0, 0, time.UTC)
		daysToFirstLate := int64(effDay.Sub(dueDay)/(24*time.Hour)) + 1
		for _, at := range []struct {
			now  time.Time
			days int64
		}{
			{firstLate, daysToFirstLate},
			{calSP(tt.paid.y, tt.paid.m, tt.paid.d, 0, 0, 0, 0), tt.daysLate},
			{calEndOfDay(tt.paid.y, tt.paid.m, tt.paid.d), tt.daysLate},
		} {
			want := lateBy(at.days)
			if got := bill.Penalty(at.now, &c); got != want {
				t.Errorf("%s: at %v penalty %+v, want %+v (days since the due date)", tt.name, at.now, got, want)
			}
			if got := bill.Outstanding(at.now, &c); got != want.Total(10000) {
				t.Errorf("%s: at %v the checkout and the card ask %d, want %d", tt.name, at.now, got, want.Total(10000))
			}
		}
	}
}

// A boleto issued for a late installment is due on a business day and
// carries what the bill owes at that day's end: paid on that day, by it,
// by a card, or as the API shows the bill, the debt is one amount. Due on
// a Saturday, it was payable on the Monday for two days' interest less
// than the checkout and the card asked then.
func TestBoletoIssuedForALateBillIsDueOnABusinessDay(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	bolepix := "bolepix"
	pc := &PaymentConfiguration{FinancedType: &bolepix}
	tests := []struct {
		name   string
		issued time.Time // 72 hours before a day banks do not settle
		due    time.Time // the business day after it
	}{
		{"to a Saturday", calSP(2026, time.March, 4, 10, 0, 0, 0), calEndOfDay(2026, time.March, 9)},
		{"to a Friday night, a Saturday in UTC", time.Date(2026, time.March, 4, 2, 30, 0, 0, time.UTC), calEndOfDay(2026, time.March, 6)},
		{"to Good Friday", calSP(2026, time.March, 31, 10, 0, 0, 0), calEndOfDay(2026, time.April, 6)},
		{"to Carnival", calSP(2026, time.February, 13, 10, 0, 0, 0), calEndOfDay(2026, time.February, 18)},
		{"to 31 December", calSP(2026, time.December, 28, 10, 0, 0, 0), calEndOfDay(2027, time.January, 4)},
		{"to a business day", calSP(2026, time.March, 2, 10, 0, 0, 0), calEndOfDay(2026, time.March, 5)},
	}
	for _, tt := range tests {
		bill := installmentDueOn(2026, time.January, 30) // a Friday, late since
		bill.Payments[0].Status = PaymentExpired
		for _, method := range []string{MethodBoleto, MethodPix} {
			o := demandPayment(&c, pc, bill, method, tt.issued)
			if !o.due.Equal(tt.due) {
				t.Errorf("%s: %s issued at %v due %v, want %v", tt.name, method, tt.issued, o.due, tt.due)
				continue
			}
			for _, now := range []time.Time{o.due, calSP(o.due.Year(), o.due.Month(), o.due.Day(), 23, 59, 59, 0).UTC()} {
				if owed := bill.Outstanding(now, &c); owed != o.amount || bill.Penalty(now, &c).Total(10000) != o.amount {
					t.Errorf("%s: %s issued for %d cents, due %v; at %v the checkout and the card ask %d", tt.name, method, o.amount, o.due, now, owed)
				}
			}
		}
	}
}
