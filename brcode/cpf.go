package brcode

import (
	"fmt"
	"strings"
)

// NormalizeDigits removes the punctuation people type into document and
// payment numbers ('.', '-', '/' and white space). Anything else, letters
// included, is kept so that validation still rejects it.
func NormalizeDigits(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '.', '-', '/', ' ', '\t', '\n', '\r':
			return -1
		}
		return r
	}, s)
}

// CPFCheckDigits returns the two check digits of a CPF given its first nine
// digits. Each digit is a mod-11 sum (weights 10..2 for the first, 11..2
// over ten digits for the second) where a remainder below 2 gives 0 and
// otherwise the digit is 11 - remainder.
func CPFCheckDigits(first9 string) (string, error) {
	if len(first9) != 9 || !isDigits(first9) {
		return "", fmt.Errorf("%w: CPF base %q must be 9 digits", ErrFormat, first9)
	}
	d1 := cpfDigit(first9)
	return string([]byte{d1, cpfDigit(first9 + string(d1))}), nil
}

func cpfDigit(s string) byte {
	sum := 0
	for i := 0; i < len(s); i++ {
		sum += int(s[i]-'0') * (len(s) + 1 - i)
	}
	if r := sum % 11; r >= 2 {
		return byte('0' + 11 - r)
	}
	return '0'
}

// ValidCPF reports whether s (bare or formatted as 000.000.000-00) is a CPF
// with correct check digits. Sequences of one repeated digit satisfy the
// check digits but are not issued, so they are rejected.
func ValidCPF(s string) bool {
	d := NormalizeDigits(s)
	if len(d) != 11 || !isDigits(d) || strings.Count(d, d[:1]) == 11 {
		return false
	}
	dv, err := CPFCheckDigits(d[:9])
	return err == nil && dv == d[9:]
}
