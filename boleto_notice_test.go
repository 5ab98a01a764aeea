package parcela

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The expiry sweep compares a first bill's boleto's expires_at with
// BoletoNoticeCutoff(now), where the rule is BoletoNoticeDeadline: they
// must agree for every expiry and every now, at the edges of days, over
// weekends, holidays, month ends and 31 December.
func TestBoletoNoticeCutoffAgreesWithTheDeadline(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(12, 31))
	start := time.Date(2025, 12, 20, 0, 0, 0, 0, SaoPaulo)
	for range 20000 {
		day := start.AddDate(0, 0, rng.IntN(400))
		var expires time.Time
		switch rng.IntN(3) {
		case 0: // with settlement grace: the end of its last day
			expires = EndOfDay(day)
		case 1: // without: the millisecond after its last day
			expires = ExpiryAfter(EndOfDay(day))
		default:
			expires = day.Add(time.Duration(rng.Int64N(int64(24 * time.Hour))))
		}
		now := expires.Add(time.Duration(rng.Int64N(int64(6*24*time.Hour))) - 12*time.Hour)
		if rng.IntN(4) == 0 { // at an edge of the deadline
			now = BoletoNoticeDeadline(expires).Add(time.Duration(rng.IntN(3)-1) * time.Millisecond)
		}
		if came, selected := !now.Before(BoletoNoticeDeadline(expires)), !expires.After(BoletoNoticeCutoff(now)); came != selected {
			t.Fatalf("expires %s, now %s: deadline %s came %v, cutoff %s selects %v",
				expires, now, BoletoNoticeDeadline(expires), came, BoletoNoticeCutoff(now), selected)
		}
	}
	// A boleto payable through Tuesday 1 December 2026 (grace included):
	// noticed by the end of Wednesday; one payable through Friday 31
	// December... of 2027, by the end of Monday 3 January 2028.
	for _, c := range []struct{ expires, deadline time.Time }{
		{EndOfDay(time.Date(2026, 12, 1, 0, 0, 0, 0, SaoPaulo)), time.Date(2026, 12, 3, 0, 0, 0, 0, SaoPaulo)},
		{ExpiryAfter(EndOfDay(time.Date(2027, 12, 31, 0, 0, 0, 0, SaoPaulo))), time.Date(2028, 1, 4, 0, 0, 0, 0, SaoPaulo)},
	} {
		if got := BoletoNoticeDeadline(c.expires); !got.Equal(c.deadline) {
			t.Errorf("expires %s: deadline %s, want %s", c.expires, got, c.deadline)
		}
	}
}

// A first bill's boleto past its expires_at stays the bill's live payment
// until its notice has surely come: a Pix of the same bill expiring then
// (a company without settlement grace expires both at the same 00:00, the
// Pix swept an hour later) lapsed the order under the boleto's notice. An
// installment's boleto has no such window: its notice reaches its open
// bill whenever it comes.
func TestFirstBillsBoletoLivesUntilItsNotice(t *testing.T) {
	t.Parallel()
	expires := ExpiryAfter(EndOfDay(time.Date(2026, 12, 4, 0, 0, 0, 0, SaoPaulo))) // Friday's end
	boleto := &Payment{ID: "boleto", Method: MethodBoleto, Status: PaymentUnpaid, ExpiresAt: expires}
	pix := &Payment{ID: "pix", Method: MethodPix, Status: PaymentUnpaid, ExpiresAt: expires}
	first := &Bill{Type: BillTypeDownPayment, Payments: []*Payment{boleto, pix}}
	installment := &Bill{Type: BillTypeInstallment, Payments: []*Payment{boleto, pix}}
	for _, c := range []struct {
		name string
		bill *Bill
		now  time.Time
		live bool
	}{
		{"a first bill's, Saturday", first, expires.Add(time.Hour), true},
		{"a first bill's, the last instant of Monday", first, time.Date(2026, 12, 7, 23, 59, 59, 999_000_000, SaoPaulo), true},
		{"a first bill's, Tuesday", first, time.Date(2026, 12, 8, 0, 0, 0, 0, SaoPaulo), false},
		{"an installment's, Saturday", installment, expires.Add(time.Hour), false},
	} {
		if got := c.bill.otherLivePayment(pix, c.now); (got == boleto) != c.live {
			t.Errorf("%s: the boleto live %v, want %v", c.name, got == boleto, c.live)
		}
	}
}
