package parcela

import (
	"testing"
	"time"
)

// PenaltyFreeThrough is the last instant the bill's penalty is none: the
// millisecond after it, the bill owes its fine.
func TestPenaltyFreeThroughIsWherePenaltiesStart(t *testing.T) {
	t.Parallel()
	c := NewCompany("Escola", "11222333000181", "escola")
	due := time.Date(2027, 1, 10, 23, 59, 59, 999_000_000, SaoPaulo) // a Sunday: effective Monday the 11th
	early := time.Date(2027, 1, 1, 9, 0, 0, 0, SaoPaulo)
	late := time.Date(2027, 1, 13, 10, 0, 0, 0, SaoPaulo)
	lateExpiry := ExpiryAfter(EndOfDay(time.Date(2027, 1, 19, 12, 0, 0, 0, SaoPaulo)))
	waiver := func(s string) *time.Time {
		w, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &w
	}
	for _, tt := range []struct {
		name   string
		first  *Payment
		waiver *time.Time
		want   time.Time
		why    string
	}{
		{"issued before its due date", &Payment{Method: MethodBoleto, CreatedAt: early, ExpiresAt: BoletoExpiry(due, 1)}, nil, EffectiveDueDate(due), PenaltyFreeEffectiveDue},
		{"a boleto issued past it", &Payment{Method: MethodBoleto, CreatedAt: late, ExpiresAt: lateExpiry}, nil, lateExpiry.Add(-time.Millisecond), PenaltyFreeFirstBoleto},
		{"a Pix issued past it", &Payment{Method: MethodPix, CreatedAt: late, ExpiresAt: lateExpiry}, nil, lateExpiry.Add(-time.Millisecond), PenaltyFreeFirstPix},
		{"waived past its due date", &Payment{Method: MethodBoleto, CreatedAt: early, ExpiresAt: BoletoExpiry(due, 1)}, waiver("2027-01-21T00:00:00-03:00"),
			time.Date(2027, 1, 20, 23, 59, 59, 999_000_000, SaoPaulo), PenaltyFreeWaiver},
		{"waived past a late boleto's expiry", &Payment{Method: MethodBoleto, CreatedAt: late, ExpiresAt: lateExpiry}, waiver("2027-02-01T12:00:00-03:00"),
			time.Date(2027, 2, 1, 11, 59, 59, 999_000_000, SaoPaulo), PenaltyFreeWaiver},
		{"waived to before a late boleto's expiry", &Payment{Method: MethodBoleto, CreatedAt: late, ExpiresAt: lateExpiry}, waiver("2027-01-15T00:00:00-03:00"),
			lateExpiry.Add(-time.Millisecond), PenaltyFreeFirstBoleto},
		{"waived to before its due date", &Payment{Method: MethodBoleto, CreatedAt: early, ExpiresAt: BoletoExpiry(due, 1)}, waiver("2027-01-05T00:00:00-03:00"),
			EffectiveDueDate(due), PenaltyFreeEffectiveDue},
	} {
		tt.first.Status, tt.first.AmountCents = PaymentUnpaid, 30000
		bill := &Bill{Type: BillTypeInstallment, Status: BillPending, AmountCents: 30000, DueDate: due, EffectiveDueDate: EffectiveDueDate(due),
			DisablePenaltiesUntil: tt.waiver, Payments: []*Payment{tt.first}}
		got, why := bill.PenaltyFreeThrough()
		if !got.Equal(tt.want) || why != tt.why {
			t.Errorf("%s: penalty-free through %v (%s), want %v (%s)", tt.name, got, why, tt.want, tt.why)
		}
		if p := bill.Penalty(got, &c); p != (Penalty{}) {
			t.Errorf("%s: owes %+v at %v, its last penalty-free instant", tt.name, p, got)
		}
		if p := bill.Penalty(got.Add(time.Millisecond), &c); p.FineCents == 0 {
			t.Errorf("%s: owes no fine a millisecond after %v", tt.name, got)
		}
	}
}
