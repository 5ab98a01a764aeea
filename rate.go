package parcela

import (
	"bytes"
	"fmt"

	"github.com/shopspring/decimal"
)

// Rate is an exact decimal fraction (0.0299 is 2.99%). It is parsed from JSON
// numbers without passing through float64 and printed back without float
// noise, because rates multiply money.
type Rate struct{ d decimal.Decimal }

// ParseRate reads a decimal written in plain or exponent notation.
func ParseRate(s string) (Rate, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Rate{}, fmt.Errorf("%q is not a decimal number", s)
	}
	return Rate{d}, nil
}

// MustRate is ParseRate for constants known to be valid.
func MustRate(s string) Rate {
	r, err := ParseRate(s)
	if err != nil {
		panic(err)
	}
	return r
}

// RateFromInt returns the whole number n as a rate (used for absolute values in cents).
func RateFromInt(n int64) Rate { return Rate{decimal.NewFromInt(n)} }

// RateFromDecimal wraps a decimal.
func RateFromDecimal(d decimal.Decimal) Rate { return Rate{d} }

// Decimal exposes the exact value for arithmetic.
func (r Rate) Decimal() decimal.Decimal { return r.d }

// String prints the shortest exact form: "0.0299", "0", "10".
func (r Rate) String() string { return r.d.String() }

// IsZero reports whether the rate is exactly zero.
func (r Rate) IsZero() bool { return r.d.IsZero() }

// IsNegative reports whether the rate is below zero.
func (r Rate) IsNegative() bool { return r.d.IsNegative() }

// Cmp compares two rates: -1, 0 or +1.
func (r Rate) Cmp(o Rate) int { return r.d.Cmp(o.d) }

// Equal reports exact equality (0.10 equals 0.1).
func (r Rate) Equal(o Rate) bool { return r.d.Equal(o.d) }

// MulCents returns cents × r rounded half-up to the cent.
func (r Rate) MulCents(cents int64) int64 {
	return RoundCents(decimal.NewFromInt(cents).Mul(r.d))
}

// RoundCents rounds an amount in cents half-up (away from zero) to a whole cent.
func RoundCents(d decimal.Decimal) int64 { return d.Round(0).IntPart() }

// MarshalJSON writes the rate as a JSON number.
func (r Rate) MarshalJSON() ([]byte, error) { return []byte(r.d.String()), nil }

// UnmarshalJSON accepts a JSON number only; strings and null are refused so
// that a typo never silently becomes zero.
func (r *Rate) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == '"' || bytes.Equal(b, []byte("null")) || b[0] == '{' || b[0] == '[' || b[0] == 't' || b[0] == 'f' {
		return fmt.Errorf("must be a number")
	}
	d, err := decimal.NewFromString(string(b))
	if err != nil {
		return fmt.Errorf("must be a number")
	}
	r.d = d
	return nil
}
