package parcela

import (
	"strings"
	"testing"
	"time"
)

// The refusal names the instant cards are taken again, as the API writes
// timestamps: a card tried at that instant is taken. Written in UTC to the
// second, it named 14:05:30 when cards rested until 14:05:30.500.
func TestCardsRestingNamesTheInstantCardsAreTakenAgain(t *testing.T) {
	t.Parallel()
	first := time.Date(2027, 3, 1, 14, 5, 30, 500e6, SaoPaulo)
	b := &Bill{}
	for i := range CardRefusalLimit {
		b.Payments = append(b.Payments, &Payment{Method: MethodCreditCard, Status: PaymentRefused, CreatedAt: first.Add(time.Duration(i) * time.Minute)})
	}
	until := b.CardsRestUntil(first.Add(10 * time.Minute))
	msg := ErrorMessage(CardsResting(until))
	_, after, ok := strings.Cut(msg, "until ")
	named, _, _ := strings.Cut(after, ": ")
	at, err := time.Parse(TimestampLayout, named)
	if !ok || err != nil {
		t.Fatalf("%q: no timestamp (%v)", msg, err)
	}
	if named != "2027-03-02T14:05:30.500-03:00" || !b.CardsRestUntil(at).IsZero() || b.CardsRestUntil(at.Add(-time.Millisecond)).IsZero() {
		t.Fatalf("%q: cards rest until %v", msg, until)
	}
}
