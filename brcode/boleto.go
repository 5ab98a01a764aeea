package brcode

import (
	"errors"
	"fmt"
	"time"
)

// Errors returned by the parsers and validators, wrapped with detail, so
// callers can tell a malformed input (ErrFormat) from one that is well
// formed but fails a check digit (ErrCheckDigit), e.g. a mistyped linha.
var (
	ErrFormat     = errors.New("brcode: invalid format")
	ErrCheckDigit = errors.New("brcode: check digit mismatch")
)

// MaxAmountCents is the largest amount a boleto barcode can carry: the
// value field has 10 digits of cents, i.e. R$ 99.999.999,99.
const MaxAmountCents = 9_999_999_999

// Boleto holds the data encoded in a FEBRABAN bank boleto barcode.
type Boleto struct {
	BankCode     string    // 3-digit compensation code of the issuing bank, e.g. "341"
	CurrencyCode byte      // '9' = real (the only currency in use)
	DueDate      time.Time // only the calendar date matters, see DueFactor
	AmountCents  int64     // 0 means "amount filled in at payment"
	FreeField    string    // 25 digits defined by the issuing bank, see FreeField
}

// Barcode returns the 44-digit barcode:
//
//	bank(3) currency(1) DV(1) due-factor(4) amount(10, cents) free-field(25)
//
// where DV is the general check digit over the other 43 digits.
func (b Boleto) Barcode() (string, error) {
	if len(b.BankCode) != 3 || !isDigits(b.BankCode) {
		return "", fmt.Errorf("%w: bank code %q must be 3 digits", ErrFormat, b.BankCode)
	}
	if b.CurrencyCode < '0' || b.CurrencyCode > '9' {
		return "", fmt.Errorf("%w: currency code %q must be a digit", ErrFormat, b.CurrencyCode)
	}
	if b.AmountCents < 0 || b.AmountCents > MaxAmountCents {
		return "", fmt.Errorf("%w: amount %d cents outside 0..%d", ErrFormat, b.AmountCents, int64(MaxAmountCents))
	}
	if len(b.FreeField) != 25 || !isDigits(b.FreeField) {
		return "", fmt.Errorf("%w: free field must be 25 digits, got %q", ErrFormat, b.FreeField)
	}
	factor, err := DueFactor(b.DueDate)
	if err != nil {
		return "", err
	}
	head := b.BankCode + string(b.CurrencyCode)
	tail := factor + fmt.Sprintf("%010d", b.AmountCents) + b.FreeField
	return head + string(mod11(head+tail)) + tail, nil
}

// LinhaDigitavel returns the 47-digit "linha digitável", the typed form of
// the barcode printed above it (see linhaFromBarcode for the layout).
func (b Boleto) LinhaDigitavel() (string, error) {
	bc, err := b.Barcode()
	if err != nil {
		return "", err
	}
	return linhaFromBarcode(bc), nil
}

// linhaFromBarcode rearranges a valid 44-digit barcode into the linha
// digitável. Fields 1–3 carry their own mod-10 digit so that typing errors
// are caught field by field before the general DV is even looked at:
//
//	field 1: bank+currency+free[0:5]  + DV   (10)
//	field 2: free[5:15]               + DV   (11)
//	field 3: free[15:25]              + DV   (11)
//	field 4: general DV                      (1)
//	field 5: due factor + amount             (14)
func linhaFromBarcode(bc string) string {
	free := bc[19:44]
	f1 := bc[0:4] + free[0:5]
	f2 := free[5:15]
	f3 := free[15:25]
	return f1 + string(mod10(f1)) + f2 + string(mod10(f2)) + f3 + string(mod10(f3)) + bc[4:5] + bc[5:19]
}

// FormatLinhaDigitavel renders 47 digits in the printed form
// "AAAAA.AAAAA BBBBB.BBBBBB CCCCC.CCCCCC D EEEEEEEEEEEEEE". Separators in
// the input are ignored; input that is not 47 digits is returned unchanged,
// so this is safe to use for display only.
func FormatLinhaDigitavel(digits string) string {
	d := NormalizeDigits(digits)
	if len(d) != 47 || !isDigits(d) {
		return digits
	}
	return d[0:5] + "." + d[5:10] + " " + d[10:15] + "." + d[15:21] + " " +
		d[21:26] + "." + d[26:32] + " " + d[32:33] + " " + d[33:47]
}

// ParseLinhaDigitavel checks a linha digitável (formatted or bare digits),
// verifying the three field DVs and the general DV, and returns the
// 44-digit barcode it represents.
func ParseLinhaDigitavel(digits string) (barcode string, err error) {
	d := NormalizeDigits(digits)
	if len(d) != 47 || !isDigits(d) {
		return "", fmt.Errorf("%w: linha digitável must be 47 digits", ErrFormat)
	}
	fields := []struct{ body, dv string }{{d[0:9], d[9:10]}, {d[10:20], d[20:21]}, {d[21:31], d[31:32]}}
	for i, f := range fields {
		if string(mod10(f.body)) != f.dv {
			return "", fmt.Errorf("%w: field %d of the linha digitável", ErrCheckDigit, i+1)
		}
	}
	barcode = d[0:4] + d[32:33] + d[33:47] + d[4:9] + d[10:20] + d[21:31]
	if err := ValidateBarcode(barcode); err != nil {
		return "", err
	}
	return barcode, nil
}

// ValidateBarcode checks that barcode has 44 digits and that its general
// check digit (position 5) matches the other 43.
func ValidateBarcode(barcode string) error {
	if len(barcode) != 44 || !isDigits(barcode) {
		return fmt.Errorf("%w: barcode must be 44 digits", ErrFormat)
	}
	if mod11(barcode[:4]+barcode[5:]) != barcode[4] {
		return fmt.Errorf("%w: general check digit of the barcode", ErrCheckDigit)
	}
	return nil
}

// mod10 is the FEBRABAN module-10 digit of the linha digitável fields:
// weights 2,1,2,1… from the rightmost digit, the digits of each product are
// summed (so 7×2=14 counts 1+4), DV = (10 - sum%10) % 10.
func mod10(s string) byte {
	sum, weight := 0, 2
	for i := len(s) - 1; i >= 0; i-- {
		p := int(s[i]-'0') * weight
		sum += p/10 + p%10
		weight = 3 - weight
	}
	return byte('0' + (10-sum%10)%10)
}

// mod11 is the FEBRABAN general check digit of the barcode: weights 2..9
// cycling from the rightmost digit, DV = 11 - sum%11, and results 0, 10 and
// 11 become 1 (the barcode never carries a 0 in position 5).
func mod11(s string) byte {
	sum, weight := 0, 2
	for i := len(s) - 1; i >= 0; i-- {
		sum += int(s[i]-'0') * weight
		if weight++; weight > 9 {
			weight = 2
		}
	}
	r := 11 - sum%11
	if r == 0 || r == 10 || r == 11 {
		return '1'
	}
	return byte('0' + r)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
