package brcode

import (
	"fmt"
	"strings"
)

// Pix describes a merchant-presented Pix BR Code (EMV QRCPS) for one charge.
// Exactly one of Key and URL must be set.
type Pix struct {
	// Key is the receiver's Pix key (EVP UUID, CNPJ, e-mail, +55 phone…),
	// written to tag 26-01.
	Key string
	// URL is, for location-based dynamic codes, the PSP payload location
	// without scheme (e.g. "pix.example.com/qr/v2/abc"), written to tag
	// 26-25. The payer's app fetches the charge (txid included) from it.
	URL          string
	MerchantName string // tag 59; accents folded to ASCII, cut to 25
	MerchantCity string // tag 60; accents folded to ASCII, cut to 15
	AmountCents  int64  // tag 54; must be positive
	// TxID is the transaction id in tag 62-05: 1–25 letters/digits, or empty
	// (written as "***", meaning "none"). With URL it must be empty, because
	// the manual requires "***" there: the txid travels in the location's
	// payload instead.
	TxID string
}

// Pix BR Code constants from the Banco Central manual.
const (
	pixGUI          = "br.gov.bcb.pix"
	pixNoTxID       = "***"
	maxPixKeyOrURL  = 99 - len("0014"+pixGUI) - 4 // what fits in template 26
	maxPixName      = 25
	maxPixCity      = 15
	maxPixTxID      = 25
	maxPixAmountLen = 13
)

// Payload returns the BR Code ("Pix copia e cola") text. The fields are, in
// order: 00 payload format "01", 01 point of initiation "12" (single use),
// 26 merchant account (00 GUI + 01 key or 25 URL), 52 MCC "0000", 53
// currency "986" (BRL), 54 amount, 58 "BR", 59 name, 60 city, 62 additional
// data (05 txid) and 63 the CRC16 of everything before it including "6304".
func (p Pix) Payload() (string, error) {
	account, err := p.merchantAccount()
	if err != nil {
		return "", err
	}
	amount, err := formatPixAmount(p.AmountCents)
	if err != nil {
		return "", err
	}
	name := toASCII(p.MerchantName, maxPixName)
	if name == "" {
		return "", fmt.Errorf("%w: Pix merchant name is empty", ErrFormat)
	}
	city := toASCII(p.MerchantCity, maxPixCity)
	if city == "" {
		return "", fmt.Errorf("%w: Pix merchant city is empty", ErrFormat)
	}
	txid, err := p.referenceLabel()
	if err != nil {
		return "", err
	}
	return withCRC(tlv("00", "01") + tlv("01", "12") + tlv("26", account) +
		tlv("52", "0000") + tlv("53", "986") + tlv("54", amount) + tlv("58", "BR") +
		tlv("59", name) + tlv("60", city) + tlv("62", tlv("05", txid))), nil
}

func (p Pix) merchantAccount() (string, error) {
	id, value, what := "01", p.Key, "key"
	switch {
	case (p.Key == "") == (p.URL == ""):
		return "", fmt.Errorf("%w: Pix needs exactly one of key and URL", ErrFormat)
	case p.URL != "":
		id, value, what = "25", p.URL, "URL"
		if strings.Contains(p.URL, "://") {
			return "", fmt.Errorf("%w: Pix URL %q must not include the scheme", ErrFormat, p.URL)
		}
	}
	if len(value) > maxPixKeyOrURL || !printableNoSpace(value) {
		return "", fmt.Errorf("%w: Pix %s must be 1 to %d printable ASCII characters without spaces", ErrFormat, what, maxPixKeyOrURL)
	}
	return tlv("00", pixGUI) + tlv(id, value), nil
}

func (p Pix) referenceLabel() (string, error) {
	switch {
	case p.TxID == "" || p.TxID == pixNoTxID:
		return pixNoTxID, nil
	case p.URL != "":
		return "", fmt.Errorf("%w: a URL-based Pix carries its txid in the location payload; 62-05 must be %q", ErrFormat, pixNoTxID)
	case len(p.TxID) > maxPixTxID || !isAlnum(p.TxID):
		return "", fmt.Errorf("%w: Pix txid %q must be 1 to %d letters or digits", ErrFormat, p.TxID, maxPixTxID)
	}
	return p.TxID, nil
}

// formatPixAmount writes cents as "123.45" with integer arithmetic only, so
// no float rounding can ever change the amount the payer sees.
func formatPixAmount(cents int64) (string, error) {
	if cents <= 0 {
		return "", fmt.Errorf("%w: Pix amount must be positive, got %d cents", ErrFormat, cents)
	}
	s := fmt.Sprintf("%d.%02d", cents/100, cents%100)
	if len(s) > maxPixAmountLen {
		return "", fmt.Errorf("%w: Pix amount %s is longer than %d characters", ErrFormat, s, maxPixAmountLen)
	}
	return s, nil
}

// tlv writes one EMV data object: ID(2) + length(2, decimal) + value. Every
// value handed to it has been checked (or is built) to fit in 99 characters.
func tlv(id, value string) string {
	return fmt.Sprintf("%s%02d%s", id, len(value), value)
}

// withCRC appends tag 63: its ID and length are part of the checksummed
// data, so the CRC is computed over payload+"6304".
func withCRC(payload string) string {
	payload += "6304"
	return fmt.Sprintf("%s%04X", payload, CRC16([]byte(payload)))
}

// CRC16 is CRC-16/CCITT-FALSE, the checksum of the BR Code: polynomial
// 0x1021, initial value 0xFFFF, no reflection, no final XOR.
func CRC16(data []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func printableNoSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return s != ""
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}
