package parcela

import (
	"testing"
	"time"
)

func TestBoletoPayableUntilAndExpiry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		due          time.Time
		grace        int
		wantPayable  time.Time
		wantLast     time.Time // the last instant it settles: it expires the millisecond after
		wantPixUntil time.Time // a Pix charge due at the same instant
	}{
		{"a Wednesday, one day of grace", calSP(2027, 3, 10, 14, 0, 0, 0), 1,
			calEndOfDay(2027, 3, 10), calEndOfDay(2027, 3, 11), calSP(2027, 3, 10, 14, 0, 0, 0)},
		{"a Friday is payable through Friday, the grace runs to Monday", calSP(2027, 3, 12, 9, 30, 0, 0), 1,
			calEndOfDay(2027, 3, 12), calEndOfDay(2027, 3, 15), calSP(2027, 3, 12, 9, 30, 0, 0)},
		{"a Saturday is payable through Monday, the grace runs to Tuesday", calSP(2026, 11, 21, 15, 30, 0, 0), 1,
			calEndOfDay(2026, 11, 23), calEndOfDay(2026, 11, 24), calSP(2026, 11, 21, 15, 30, 0, 0)},
		{"a Sunday without grace", calEndOfDay(2026, 11, 22), 0,
			calEndOfDay(2026, 11, 23), calEndOfDay(2026, 11, 23), calEndOfDay(2026, 11, 22)},
		{"a holiday (Tiradentes, a Wednesday) moves to Thursday", calEndOfDay(2027, 4, 21), 1,
			calEndOfDay(2027, 4, 22), calEndOfDay(2027, 4, 23), calEndOfDay(2027, 4, 21)},
		{"the grace skips Carnival", calEndOfDay(2027, 2, 5), 2,
			calEndOfDay(2027, 2, 5), calEndOfDay(2027, 2, 11), calEndOfDay(2027, 2, 5)},
		{"31 December, when banks do not settle", calEndOfDay(2026, 12, 31), 1,
			calEndOfDay(2027, 1, 4), calEndOfDay(2027, 1, 5), calEndOfDay(2026, 12, 31)},
		{"30 December: its grace day is not 31 December", calEndOfDay(2026, 12, 30), 1,
			calEndOfDay(2026, 12, 30), calEndOfDay(2027, 1, 4), calEndOfDay(2026, 12, 30)},
		{"a month's end on a Sunday", calEndOfDay(2027, 1, 31), 1,
			calEndOfDay(2027, 2, 1), calEndOfDay(2027, 2, 2), calEndOfDay(2027, 1, 31)},
		{"February's end with the most grace", calEndOfDay(2027, 2, 26), MaxBoletoGraceBusinessDays,
			calEndOfDay(2027, 2, 26), calEndOfDay(2027, 3, 5), calEndOfDay(2027, 2, 26)},
		{"a due instant given in UTC is a São Paulo date", time.Date(2027, 3, 13, 2, 0, 0, 0, time.UTC), 1,
			calEndOfDay(2027, 3, 12), calEndOfDay(2027, 3, 15), calSP(2027, 3, 12, 23, 0, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BoletoPayableUntil(tt.due); !got.Equal(tt.wantPayable) {
				t.Errorf("payable until %v, want %v", got, tt.wantPayable)
			}
			wantExpiry := tt.wantLast.Add(time.Millisecond)
			got := BoletoExpiry(tt.due, tt.grace)
			if !got.Equal(wantExpiry) || got.Location() != SaoPaulo {
				t.Errorf("expires %v, want %v", got, wantExpiry)
			}
			if got := PaymentExpiry(MethodBoleto, tt.due, tt.grace); !got.Equal(wantExpiry) {
				t.Errorf("boleto payment expires %v, want %v", got, wantExpiry)
			}
			boleto := &Payment{Method: MethodBoleto, ExpiresAt: got}
			if !boleto.settlesAt(tt.wantLast) || boleto.settlesAt(wantExpiry) {
				t.Errorf("settles at its last instant %v: %v; at its expiry: %v", tt.wantLast, boleto.settlesAt(tt.wantLast), boleto.settlesAt(wantExpiry))
			}
			if got := PaymentExpiry(MethodPix, tt.due, tt.grace); !got.Equal(tt.wantPixUntil) {
				t.Errorf("pix payment expires %v, want exactly %v", got, tt.wantPixUntil)
			}
		})
	}
}

// Across the end of daylight saving time nothing shifts the wall clock.
func TestAddBusinessDaysAcrossDST(t *testing.T) {
	t.Parallel()
	if got, want := AddBusinessDays(calSP(2018, 2, 16, 12, 0, 0, 0), 1), calSP(2018, 2, 19, 12, 0, 0, 0); !got.Equal(want) {
		t.Errorf("across the 2018 DST end: %v, want %v", got, want)
	}
}

// A bill due at the end of its day is on time through that day's last
// millisecond, and so is a payment that keeps it payable then: an
// installment's Pix asked for on its checkout, and a boleto of a company
// that gives no settlement grace. Each expired at that millisecond, so money
// paid on time was refused. A boleto with grace is payable through its
// grace's last millisecond as well: it expired at it, and refused a
// payment the pages showed it taking.
func TestPaymentsSettleInTheirBillsLastOnTimeMillisecond(t *testing.T) {
	t.Parallel()
	due := calEndOfDay(2027, 3, 1)
	bill := &Bill{Type: BillTypeInstallment, AmountCents: 10000, DueDate: due, EffectiveDueDate: EffectiveDueDate(due)}
	for _, grace := range []int{0, 1} {
		c := &Company{BoletoGraceBusinessDays: grace, PaymentExpiryHours: 72}
		if bill.Penalty(due, c) != (Penalty{}) {
			t.Fatal("the bill is late at its due instant")
		}
		o := demandPayment(c, &PaymentConfiguration{}, bill, MethodPix, calSP(2027, 2, 26, 9, 0, 0, 0))
		pix := &Payment{Method: MethodPix, ExpiresAt: o.expires}
		if !pix.settlesAt(due) || pix.settlesAt(due.Add(time.Millisecond)) {
			t.Errorf("grace %d: a Pix expiring %v settles at %v: %v; a millisecond later: %v", grace, pix.ExpiresAt, due,
				pix.settlesAt(due), pix.settlesAt(due.Add(time.Millisecond)))
		}
		boleto := &Payment{Method: MethodBoleto, ExpiresAt: BoletoExpiry(due, grace)}
		if !boleto.settlesAt(BoletoPayableUntil(due)) {
			t.Errorf("grace %d: a boleto expiring %v does not settle at %v, its last payable instant", grace, boleto.ExpiresAt, BoletoPayableUntil(due))
		}
		graceEnd := EndOfDay(AddBusinessDays(BoletoPayableUntil(due), grace))
		if !boleto.settlesAt(graceEnd) || !boleto.ExpiresAt.Equal(graceEnd.Add(time.Millisecond)) {
			t.Errorf("grace %d: a boleto expiring %v settles at %v, its grace's last millisecond: %v", grace, boleto.ExpiresAt, graceEnd, boleto.settlesAt(graceEnd))
		}
	}
}
