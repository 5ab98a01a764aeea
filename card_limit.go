package parcela

import (
	"errors"
	"slices"
	"strconv"
	"time"
)

// Card testing: someone with a list of stolen card numbers tries them on
// any open bill's checkout, one after another, to learn which the issuer
// approves. Each refusal costs the seller the acquirer's fee and its fraud
// score. So one bill takes at most CardRefusalLimit refused card attempts
// in any CardRefusalWindow: after that its card option rests, and an
// attempt is refused before the acquirer is asked, until the oldest of
// those refusals is CardRefusalWindow old. A payer whose cards were
// refused can still pay the bill by Pix or boleto at once.
const (
	CardRefusalLimit  = 5
	CardRefusalWindow = 24 * time.Hour
)

// CardAttemptLimit is the limit a card attempt's intent is recorded under
// (CheckoutStore.RecordCardIntent): its bill may have had fewer than Max
// refused card payments created after Since, attempts in flight counted.
type CardAttemptLimit struct {
	Max   int
	Since time.Time
}

// ErrCardAttemptsExhausted is the store's report that a card attempt's
// bill reached its CardAttemptLimit: nothing was recorded.
var ErrCardAttemptsExhausted = errors.New("the bill reached its limit of refused card attempts")

// cardAttemptLimit is the limit at now.
func cardAttemptLimit(now time.Time) CardAttemptLimit {
	return CardAttemptLimit{Max: CardRefusalLimit, Since: now.Add(-CardRefusalWindow)}
}

// CardsRestUntil is when b takes cards again, at now: zero while it does,
// or the instant enough of its refused card attempts of the last
// CardRefusalWindow are older than that for fewer than CardRefusalLimit
// to be left.
func (b *Bill) CardsRestUntil(now time.Time) time.Time {
	since := now.Add(-CardRefusalWindow)
	var refused []time.Time
	for _, p := range b.Payments {
		if p.Method == MethodCreditCard && p.Status == PaymentRefused && p.CreatedAt.After(since) {
			refused = append(refused, p.CreatedAt)
		}
	}
	if len(refused) < CardRefusalLimit {
		return time.Time{}
	}
	slices.SortFunc(refused, func(a, b time.Time) int { return a.Compare(b) })
	return refused[len(refused)-CardRefusalLimit].Add(CardRefusalWindow)
}

// CardsResting is the error of a card attempt on a bill whose cards rest
// (CardsRestUntil), until then, or zero when not known (attempts in
// flight on other requests made the limit). The instant is written as the
// API writes every timestamp (São Paulo time, to the millisecond): cut to
// the second in UTC, it named an instant at which cards still rested.
func CardsResting(until time.Time) error {
	msg := "the bill had too many refused card attempts; it takes no card for now: pay it by Pix or boleto, or try a card later"
	if !until.IsZero() {
		msg = "the bill had " + strconv.Itoa(CardRefusalLimit) + " refused card attempts in " + CardRefusalWindow.String() +
			"; it takes no card until " + until.In(SaoPaulo).Format(TimestampLayout) + ": pay it by Pix or boleto, or try a card then"
	}
	return &Error{Code: ERATELIMITED, Message: msg}
}
