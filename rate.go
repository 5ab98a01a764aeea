package parcela

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Rate is an exact decimal fraction (0.0299 is 2.99%). It is parsed from JSON
// numbers without passing through float64 and printed back without float
// noise, because rates multiply money.
//
// A number too long or too far from 1 to be any rate (1e10000, 1e-61, a
// thousand digits) is kept as an unbounded Rate instead of a decimal:
// arithmetic on it would allocate its digits (and 1e10000 render as 10 KB),
// so every validation refuses it and it never reaches a computation.
type Rate struct {
	d         decimal.Decimal
	unbounded bool
}

// RatePlaces is how many decimal places an accepted rate may have: 0.000001
// is a ten-thousandth of a percent, finer than any price list.
const RatePlaces = 6

// The envelope of numbers a Rate keeps exactly. Anything a seller or an
// operator can legitimately send (a rate of at most 6 places, whole cents up
// to MaxAmountCents) is well inside it.
const (
	maxRateText     = 64
	minRateExponent = -40
	maxRateExponent = 20
)

var errUnbounded = errors.New("is not a rate")

// parseRate reads a decimal in plain or exponent notation; a number outside
// the envelope parses as an unbounded Rate, anything else not a number fails.
func parseRate(s string) (Rate, error) {
	if len(s) > maxRateText {
		if !isJSONNumber(s) {
			return Rate{}, fmt.Errorf("not a decimal number")
		}
		if zeroMantissa(s) {
			return Rate{d: decimal.Zero}, nil
		}
		return Rate{unbounded: true}, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		if isJSONNumber(s) { // an exponent past int32
			if zeroMantissa(s) {
				return Rate{d: decimal.Zero}, nil
			}
			return Rate{unbounded: true}, nil
		}
		return Rate{}, fmt.Errorf("not a decimal number")
	}
	if d.IsZero() {
		// Zero is a rate however it is written: 0e-41, whose exponent is
		// past the envelope, was refused as out of range (an audit).
		return Rate{d: decimal.Zero}, nil
	}
	if e := d.Exponent(); e < minRateExponent || e > maxRateExponent {
		return Rate{unbounded: true}, nil
	}
	return Rate{d: d}, nil
}

// zeroMantissa tells whether the number s (isJSONNumber) is zero: every
// digit before its exponent is 0.
func zeroMantissa(s string) bool {
	m, _, _ := strings.Cut(strings.ToLower(s), "e")
	return strings.Trim(m, "-+0.") == ""
}

// ParseRate reads a decimal written in plain or exponent notation, refusing
// numbers outside the envelope any rate or amount fits in.
func ParseRate(s string) (Rate, error) {
	r, err := parseRate(s)
	if err != nil {
		return Rate{}, fmt.Errorf("%q is not a decimal number", s)
	}
	if r.unbounded {
		return Rate{}, fmt.Errorf("%q is out of range", truncateText(s, 20))
	}
	return r, nil
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
func RateFromInt(n int64) Rate { return Rate{d: decimal.NewFromInt(n)} }

// RateFromDecimal wraps a decimal.
func RateFromDecimal(d decimal.Decimal) Rate { return Rate{d: d} }

// Decimal exposes the exact value for arithmetic (zero for an unbounded rate,
// which validation refuses before any arithmetic).
func (r Rate) Decimal() decimal.Decimal { return r.d }

// String prints the shortest exact form: "0.0299", "0", "10".
func (r Rate) String() string {
	if r.unbounded {
		return "out-of-range"
	}
	return r.d.String()
}

// IsZero reports whether the rate is exactly zero.
func (r Rate) IsZero() bool { return !r.unbounded && r.d.IsZero() }

// IsNegative reports whether the rate is below zero.
func (r Rate) IsNegative() bool { return !r.unbounded && r.d.IsNegative() }

// Cmp compares two rates: -1, 0 or +1.
func (r Rate) Cmp(o Rate) int { return r.d.Cmp(o.d) }

// Equal reports exact equality (0.10 equals 0.1).
func (r Rate) Equal(o Rate) bool { return r.unbounded == o.unbounded && r.d.Equal(o.d) }

// Places is the number of decimal places r needs: 2 for 0.10 and 0.01, 0 for 10.
func (r Rate) Places() int {
	if r.unbounded || r.d.Exponent() >= 0 {
		return 0
	}
	s := r.d.String() // trailing zeros trimmed; the envelope keeps it short
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// MulCents returns cents × r rounded half-up to the cent.
func (r Rate) MulCents(cents int64) int64 {
	return RoundCents(decimal.NewFromInt(cents).Mul(r.d))
}

// RoundCents rounds an amount in cents half-up (away from zero) to a whole cent.
func RoundCents(d decimal.Decimal) int64 { return d.Round(0).IntPart() }

// MarshalJSON writes the rate as a JSON number.
func (r Rate) MarshalJSON() ([]byte, error) {
	if r.unbounded {
		return nil, errUnbounded
	}
	return []byte(r.d.String()), nil
}

// UnmarshalJSON accepts a JSON number only; strings and null are refused so
// that a typo never silently becomes zero. A number outside the envelope is
// kept as unbounded, for validation to refuse with the field's name.
//
// The request decoder (jsonbody) names the field in the refusal.
func (r *Rate) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == '"' || bytes.Equal(b, []byte("null")) || b[0] == '{' || b[0] == '[' || b[0] == 't' || b[0] == 'f' {
		return errors.New("must be a number")
	}
	parsed, err := parseRate(string(b))
	if err != nil {
		return errors.New("must be a number")
	}
	*r = parsed
	return nil
}

// isJSONNumber reports whether s is a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s string) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if i < len(s) && s[i] >= '1' && s[i] <= '9' {
		digits()
	} else {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// truncateText is s, or its first n characters and an ellipsis, to quote
// in an error message.
func truncateText(s string, n int) string {
	if cut := CutText(s, n); cut != s {
		return cut + "…"
	}
	return s
}

// checkRate adds a field error unless r is a fraction in [0, max] with at
// most RatePlaces decimal places.
func checkRate(v *Validation, field string, r, max Rate) bool {
	switch {
	case r.unbounded:
		v.Add(field, "invalid", fmt.Sprintf("must be a decimal between 0 and %s with at most %d decimal places", max, RatePlaces))
	case r.IsNegative():
		v.Add(field, "too_small", "must not be negative")
	case r.Cmp(max) > 0:
		v.Add(field, "too_large", "must be at most "+max.String())
	case r.Places() > RatePlaces:
		v.Add(field, "invalid", fmt.Sprintf("must have at most %d decimal places", RatePlaces))
	default:
		return true
	}
	return false
}

// checkRateCents adds a field error unless r, an absolute value in cents,
// is a whole number in [0, MaxAmountCents].
func checkRateCents(v *Validation, field string, r Rate) bool {
	switch {
	case r.unbounded || r.d.GreaterThan(decimal.NewFromInt(MaxAmountCents)):
		v.Add(field, "too_large", fmt.Sprintf("must be at most %d cents", int64(MaxAmountCents)))
	case r.IsNegative():
		v.Add(field, "too_small", "must not be negative")
	case !r.d.IsInteger():
		v.Add(field, "invalid", "must be a whole number of cents")
	default:
		return true
	}
	return false
}

// rateOne is 100%, the bound of most rates, parsed once: plans check their
// rates on every preview of the offer page.
var rateOne = MustRate("1")
