package parcela

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"
)

// The bill forms are the API's hottest responses (a page of the listing is
// a hundred of them), and encoding/json's reflection, its text-marshaler
// round trip for every timestamp and its garbage were a tenth of a
// listing's CPU. AppendJSON writes them directly, byte for byte as
// json.Marshal does (form_json_test.go compares the two over every field,
// so a field added to a form and not here fails the test). They are not
// json.Marshalers, so json.Marshal stays the reference: the events (and
// so the webhooks' payloads) written by them are the bytes it wrote.

// AppendJSON appends f exactly as json.Marshal(f) writes it, failing where
// it does (a Rate out of range).
func (f BillEndpointForm) AppendJSON(dst []byte) ([]byte, error) {
	dst = f.billBase.appendFields(append(dst, '{'))
	dst = appendJSONArray(append(dst, `,"payments":`...), f.Payments, (*PaymentBillForm).appendJSON)
	dst = appendJSONString(append(dst, `,"authentication_code":`...), f.AuthenticationCode)
	dst, err := f.Billing.appendJSON(append(dst, `,"billing":`...))
	if err != nil {
		return nil, err
	}
	dst = appendJSONString(append(dst, `,"checkout_url":`...), f.CheckoutURL)
	dst = strconv.AppendInt(append(dst, `,"current_amount_cents":`...), f.CurrentAmountCents, 10)
	dst = strconv.AppendInt(append(dst, `,"received_amount_cents":`...), f.ReceivedAmountCents, 10)
	dst = strconv.AppendInt(append(dst, `,"original_amount_cents":`...), f.OriginalAmountCents, 10)
	dst = appendJSONTimestampPtr(append(dst, `,"disable_penalties_until":`...), f.DisablePenaltiesUntil)
	dst = appendJSONTimestamp(append(dst, `,"effective_due_date":`...), f.EffectiveDueDate)
	dst = appendJSONTimestampPtr(append(dst, `,"paid_at":`...), f.PaidAt)
	return append(dst, '}'), nil
}

// appendFields writes billBase's members without braces (it is embedded).
func (b *billBase) appendFields(dst []byte) []byte {
	dst = appendJSONString(append(dst, `"id":`...), b.ID)
	dst = strconv.AppendInt(append(dst, `,"amount_cents":`...), b.AmountCents, 10)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), b.CreatedAt)
	dst = appendJSONTimestamp(append(dst, `,"updated_at":`...), b.UpdatedAt)
	dst = appendJSONString(append(dst, `,"status":`...), b.Status)
	dst = appendJSONTimestamp(append(dst, `,"due_date":`...), b.DueDate)
	dst = appendJSONString(append(dst, `,"bill_type":`...), string(b.BillType))
	d := &b.BillDetails
	dst = strconv.AppendInt(append(dst, `,"bill_details":{"down_payment":`...), d.DownPaymentCents, 10)
	dst = strconv.AppendInt(append(dst, `,"registration_fee":`...), d.RegistrationFeeCents, 10)
	dst = strconv.AppendInt(append(dst, `,"amortization":`...), d.AmortizationCents, 10)
	dst = strconv.AppendInt(append(dst, `,"interest":`...), d.InterestCents, 10)
	return append(dst, '}')
}

func (p *PaymentBillForm) appendJSON(dst []byte) []byte {
	dst = p.PaymentOrderForm.appendFields(append(dst, '{'))
	dst = appendJSONStringPtr(append(dst, `,"barcode_image_url":`...), p.BarcodeImageURL)
	dst = appendJSONString(append(dst, `,"bill_id":`...), p.BillID)
	dst = appendJSONStringPtr(append(dst, `,"refused_reason":`...), p.RefusedReason)
	dst = appendJSONStringPtr(append(dst, `,"refused_reason_description":`...), p.RefusedReasonDescription)
	return append(dst, '}')
}

// appendFields writes PaymentOrderForm's members without braces.
func (p *PaymentOrderForm) appendFields(dst []byte) []byte {
	dst = appendJSONString(append(dst, `"id":`...), p.ID)
	dst = appendJSONTimestamp(append(dst, `,"created_at":`...), p.CreatedAt)
	dst = strconv.AppendInt(append(dst, `,"amount_cents":`...), p.AmountCents, 10)
	dst = strconv.AppendInt(append(dst, `,"paid_amount_cents":`...), p.PaidAmountCents, 10)
	dst = strconv.AppendInt(append(dst, `,"refunded_amount_cents":`...), p.RefundedAmountCents, 10)
	dst = appendJSONTimestampPtr(append(dst, `,"paid_at":`...), p.PaidAt)
	dst = appendJSONTimestampPtr(append(dst, `,"refunded_at":`...), p.RefundedAt)
	dst = appendJSONString(append(dst, `,"status":`...), p.Status)
	dst = appendJSONString(append(dst, `,"payment_method":`...), p.PaymentMethod)
	dst = appendJSONString(append(dst, `,"url":`...), p.URL)
	dst = appendJSONStringPtr(append(dst, `,"barcode":`...), p.Barcode)
	dst = appendJSONTimestamp(append(dst, `,"expires_at":`...), p.ExpiresAt)
	dst = strconv.AppendInt(append(dst, `,"installments":`...), int64(p.Installments), 10)
	dst = appendJSONStringPtr(append(dst, `,"pix_code":`...), p.PixCode)
	dst = appendJSONStringPtr(append(dst, `,"pix_qrcode_url":`...), p.PixQRCodeURL)
	dst = appendJSONStringPtr(append(dst, `,"card_brand":`...), p.CardBrand)
	return appendJSONStringPtr(append(dst, `,"card_last_digits":`...), p.CardLastDigits)
}

func (b *BillingSummaryForm) appendJSON(dst []byte) ([]byte, error) {
	dst = b.billingBase.appendFields(append(dst, '{'))
	dst = appendJSONString(append(dst, `,"order_id":`...), b.OrderID)
	dst = appendJSONStringPtr(append(dst, `,"origin_billing_id":`...), b.OriginBillingID)
	return append(dst, '}'), nil
}

// appendJSONRate writes what Rate.MarshalJSON returns for a field of type
// t (Rate or *Rate, which json.Marshal's error names), failing where
// json.Marshal fails: on an unbounded rate, or on text that is no number.
func appendJSONRate(dst []byte, r Rate, t reflect.Type) ([]byte, error) {
	if r.unbounded {
		return nil, &json.MarshalerError{Type: t, Err: errUnbounded}
	}
	s := r.d.String()
	if !isJSONNumber(s) {
		return nil, &json.MarshalerError{Type: t, Err: errUnbounded}
	}
	return append(dst, s...), nil
}

// appendJSONTimestamp writes Timestamp.MarshalText's text, quoted (it is
// digits and -:.TZ+ only, which JSON never escapes). Years 1000 to 9999 are
// written by hand: time's AppendFormat parses its layout and looks the zone
// up three times per call, two fifths of the listing's rendering. Any other
// year takes AppendFormat itself.
func appendJSONTimestamp(dst []byte, t Timestamp) []byte {
	sp := time.Time(t).In(SaoPaulo)
	_, off := sp.Zone()
	sec := sp.Unix()
	if sec < minFastTimestamp || sec > maxFastTimestamp || off <= -24*3600 || off >= 24*3600 {
		dst = append(dst, '"')
		dst = sp.AppendFormat(dst, TimestampLayout)
		return append(dst, '"')
	}
	wall := time.Unix(sec+int64(off), 0).UTC()
	y, mo, d := wall.Date()
	h, mi, s := wall.Clock()
	ms := sp.Nanosecond() / 1e6
	dst = append(dst, '"', byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	dst = append(dst, byte('0'+mo/10), byte('0'+mo%10), '-', byte('0'+d/10), byte('0'+d%10), 'T')
	dst = append(dst, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
	dst = append(dst, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	if off == 0 {
		return append(dst, 'Z', '"')
	}
	// As time's Z07:00: whole minutes toward zero, the sign of those.
	zone := off / 60
	sign := byte('+')
	if zone < 0 {
		sign, zone = '-', -zone
	}
	zh, zm := zone/60, zone%60
	return append(dst, sign, byte('0'+zh/10), byte('0'+zh%10), ':', byte('0'+zm/10), byte('0'+zm%10), '"')
}

// The instants whose year is 1000 to 9999 in any zone less than a day off
// UTC: the range appendJSONTimestamp writes by hand.
var (
	minFastTimestamp = time.Date(1000, 1, 2, 0, 0, 0, 0, time.UTC).Unix()
	maxFastTimestamp = time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC).Unix()
)

func appendJSONTimestampPtr(dst []byte, t *Timestamp) []byte {
	if t == nil {
		return append(dst, "null"...)
	}
	return appendJSONTimestamp(dst, *t)
}

func appendJSONStringPtr(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, *s)
}

const jsonHex = "0123456789abcdef"

// jsonPlain holds the ASCII bytes encoding/json copies as they are with
// HTML escaping on: printable, but not ", \\, <, > or &.
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// plain8 reports whether the 8 bytes of s are all jsonPlain, a word at a
// time: a false "no" only sends them through the byte loop.
func plain8(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	// A byte of 0x80 or more, or one below 0x20, or one equal to c: each
	// test can only err towards "found".
	found := x | (x-0x20*ones)&^x
	for _, c := range [...]uint64{'"', '\\', '<', '>', '&'} {
		y := x ^ c*ones
		found |= (y - ones) &^ y
	}
	return found&highs == 0
}

// appendJSONString quotes s as encoding/json does with HTML escaping on:
// <, > and & as \u003c..., control characters escaped, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
		}
		if i == len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			if jsonPlain[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHex[b>>4], jsonHex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', jsonHex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendJSONArray appends s as json.Marshal writes a slice: null when nil,
// else its elements, each written by each, between brackets.
func appendJSONArray[T any](dst []byte, s []T, each func(*T, []byte) []byte) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = each(&s[i], dst)
	}
	return append(dst, ']')
}

// AppendJSONArrayOf is appendJSONArray for elements whose writing can fail
// (a Rate out of range), failing with the first.
func AppendJSONArrayOf[T any](dst []byte, s []T, each func(*T, []byte) ([]byte, error)) ([]byte, error) {
	if s == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = each(&s[i], dst); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}
