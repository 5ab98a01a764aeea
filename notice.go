package parcela

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// SettlementNotice is a bank's notice as it was applied: the payment it
// settled, the amount it brought and when it was paid.
type SettlementNotice struct {
	ID              string // the bank's id of the notice
	CompanyID       string
	Environment     Environment
	PaymentID       string
	PaidAmountCents int64
	PaidAt          time.Time
	CreatedAt       time.Time
}

// maxNoticeID is the longest notice id taken (a Pix end-to-end id has 32
// characters).
const maxNoticeID = 64

// checkNoticeID refuses a notice id that is no single line of text of at
// most maxNoticeID characters.
func checkNoticeID(id string) error {
	var v Validation
	if checkText(&v, "notice_id", id, SingleLine) && utf8.RuneCountInString(id) > maxNoticeID {
		v.Add("notice_id", "too_long", "must be at most 64 characters")
	}
	return v.Err()
}

// replays tells whether s, naming notice n's id, is n delivered again: of
// the same payment, and with the same amount and paid_at where it sends
// them. Another settlement under the id is refused.
func (n *SettlementNotice) replays(paymentID string, s Settlement) error {
	if n.PaymentID == paymentID && (s.PaidAmountCents == nil || *s.PaidAmountCents == n.PaidAmountCents) &&
		(s.PaidAt == nil || s.PaidAt.Truncate(time.Millisecond).Equal(n.PaidAt)) {
		return nil
	}
	return &Error{Code: EINVALID, Message: "notice_id names another settlement already applied",
		Fields: []FieldError{{Field: "notice_id", Code: "invalid", Message: "names another settlement already applied (" +
			strconv.FormatInt(n.PaidAmountCents, 10) + " cents paid at " + n.PaidAt.In(SaoPaulo).Format(TimestampLayout) + " to payment " + n.PaymentID + ")"}}}
}
