package bank

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"parcela"
)

// SimulatedAcquirer plays a card acquirer for the sandbox: no card leaves
// the process, and the outcome is chosen by the card number.
//
// Test cards (any holder name, any future expiry, any CVV of the right
// length: 4 digits for American Express, 3 otherwise):
//
//	number                 brand        outcome
//	4111 1111 1111 1111    Visa         approved
//	5555 5555 5555 4444    Mastercard   approved
//	2223 0000 4841 0010    Mastercard   approved (2-series BIN)
//	3782 822463 10005      Amex         approved
//	6362 9700 0045 7013    Elo          approved
//	6062 8256 2425 4001    Hipercard    approved
//	4000 0000 0000 9995    Visa         refused: insufficient_funds
//	4000 0000 0000 0002    Visa         refused: card_declined
//	4000 0000 0000 0069    Visa         refused: expired_card
//	4000 0000 0000 0127    Visa         refused: invalid_cvv
//	4100 0000 0000 0019    Visa         refused: suspected_fraud
//	4000 0000 0000 0119    Visa         refused: processing_error
//
// Any other valid card is refused with card_declined, so a real card typed
// into the sandbox is never taken for an approved one.
type SimulatedAcquirer struct{}

// TestCards maps each test card number to the refusal it gets, "" for
// approved.
var TestCards = map[string]string{
	"4111111111111111": "",
	"5555555555554444": "",
	"2223000048410010": "",
	"378282246310005":  "",
	"6362970000457013": "",
	"6062825624254001": "",
	"4000000000009995": parcela.RefusedInsufficientFunds,
	"4000000000000002": parcela.RefusedCardDeclined,
	"4000000000000069": parcela.RefusedExpiredCard,
	"4000000000000127": parcela.RefusedInvalidCVV,
	"4100000000000019": parcela.RefusedSuspectedFraud,
	"4000000000000119": parcela.RefusedProcessingError,
}

// Authorize decides by the card number. The authorization id is derived
// from the payment id, so a retried authorization of one payment gets the
// same one.
func (SimulatedAcquirer) Authorize(ctx context.Context, req parcela.CardAuthorization) (parcela.CardDecision, error) {
	if err := ctx.Err(); err != nil {
		return parcela.CardDecision{}, err
	}
	if req.AmountCents <= 0 || req.Installments < 1 {
		return parcela.CardDecision{}, fmt.Errorf("simulated acquirer: amount %d in %d installments", req.AmountCents, req.Installments)
	}
	reason, known := TestCards[parcela.CardDigits(req.Card.Number)]
	switch {
	case !known:
		return parcela.CardDecision{RefusedReason: parcela.RefusedCardDeclined}, nil
	case reason != "":
		return parcela.CardDecision{RefusedReason: reason}, nil
	}
	sum := sha256.Sum256([]byte("authorization:" + req.PaymentID))
	return parcela.CardDecision{Approved: true, AuthorizationID: "SIM" + hex.EncodeToString(sum[:6])}, nil
}

// Void releases an approval. The simulated acquirer holds no money, so
// there is nothing to release.
func (SimulatedAcquirer) Void(ctx context.Context, v parcela.CardVoid) error {
	return ctx.Err()
}
