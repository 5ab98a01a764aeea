package parcela

import (
	"fmt"

	"github.com/shopspring/decimal"

	"parcela/brcode"
)

// MaxAmountCents is the largest amount a boleto (ten digits of cents in its
// barcode) or a Pix code can carry: R$ 99.999.999,99. Products, offers and
// every bill stay at or below it, so nothing is sold that cannot be paid.
const MaxAmountCents = brcode.MaxAmountCents

// Every amount entering the schedule is at most MaxAmountCents and every
// rate at most 1, so no derived amount (fee, down payment, interest, an
// installment, a total of at most 120 bills) comes near int64's 9.2×10¹⁸.
// The conversions below still check, so that a broken bound is an error
// rather than a wrapped-around amount.

// centsOf converts a whole decimal number of cents to int64, or fails.
func centsOf(d decimal.Decimal) (int64, error) {
	if !d.IsInteger() || d.Abs().GreaterThan(decimal.NewFromInt(MaxAmountCents*1000)) {
		return 0, Errorf(EINVALID, "an amount of %s cents is out of range", truncateText(d.String(), 24))
	}
	return d.IntPart(), nil
}

// sumCents adds amounts, failing past MaxAmountCents×1000 (far below int64's
// limit, far above any plan), so no sum can wrap around.
func sumCents(amounts ...int64) (int64, error) {
	const limit = MaxAmountCents * 1000
	var total int64
	for _, a := range amounts {
		if a > limit || a < -limit || total > limit-a || total < -limit-a {
			return 0, Errorf(EINVALID, "a total of amounts is out of range")
		}
		total += a
	}
	return total, nil
}

// checkAmount adds a field error unless cents is in [min, MaxAmountCents].
func checkAmount(v *Validation, field string, cents, min int64) bool {
	switch {
	case cents < min:
		v.Add(field, "too_small", fmt.Sprintf("must be at least %d", min))
	case cents > MaxAmountCents:
		v.Add(field, "too_large", fmt.Sprintf("must be at most %d cents, the most a boleto or Pix code can carry", int64(MaxAmountCents)))
	default:
		return true
	}
	return false
}
