package brcode

import "strings"

// ValidCNPJ reports whether s (bare or formatted as 00.000.000/0000-00) is
// a CNPJ with correct check digits. The Receita Federal issues alphanumeric
// CNPJs from July 2026 (IN RFB 2.229/2024): the first twelve characters
// may then be digits or capital letters, each worth its ASCII code − 48,
// and the two check digits stay digits; numeric CNPJs are the case where
// every character is a digit. One character repeated fourteen times
// satisfies the check digits but is not issued, so it is rejected.
func ValidCNPJ(s string) bool {
	d := NormalizeDigits(s)
	if len(d) != 14 || strings.Count(d, d[:1]) == 14 || !isDigits(d[12:]) {
		return false
	}
	for i := 0; i < 12; i++ {
		if c := d[i]; !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	first := cnpjDigit(d[:12])
	return d[12] == first && d[13] == cnpjDigit(d[:12]+string(first))
}

// cnpjDigit is the mod-11 check digit of s (12 or 13 characters), weighted
// 2..9 from the right and cycling: a remainder below 2 gives 0, otherwise
// the digit is 11 − remainder.
func cnpjDigit(s string) byte {
	sum, weight := 0, 2
	for i := len(s) - 1; i >= 0; i-- {
		sum += int(s[i]-'0') * weight
		if weight++; weight > 9 {
			weight = 2
		}
	}
	if r := sum % 11; r >= 2 {
		return byte('0' + 11 - r)
	}
	return '0'
}
