package parcela

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Error codes. Each maps to one HTTP status in server/problem.go, the only
// place that knows about HTTP.
const (
	ECONFLICT         = "conflict"
	EINTERNAL         = "internal_error"
	EINVALID          = "validation_failed"
	EINVALIDSTATE     = "invalid_state"
	EMALFORMED        = "malformed_request"
	ENOTFOUND         = "not_found"
	EUNAUTHORIZED     = "unauthorized"
	ECREDITCARD       = "credit_card_not_supported"
	EIDEMPOTENTREUSED = "idempotency_key_reused"
	EIDEMPOTENTFLIGHT = "idempotency_in_flight"
	ERATELIMITED      = "rate_limited"
	EPAYLOADTOOLARGE  = "payload_too_large"
	EUNSUPPORTEDMEDIA = "unsupported_media_type"
	EMETHODNOTALLOWED = "method_not_allowed"
	EUNAVAILABLE      = "unavailable"
)

// FieldError names one invalid field of a request, with a path like
// "offer.amount_cents" or "payment_configurations[1].interest_rate".
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error is the domain's error: a machine-readable code, a message safe to
// show the API user, and, for validation failures, every field at fault.
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
	// Cause is what failed underneath (a database that is full or gone),
	// for the log only: the user sees Message.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("parcela error: code=%s message=%s cause=%v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("parcela error: code=%s message=%s", e.Code, e.Message)
}

// Unwrap is the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Errorf is a helper that returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of an application error, EINTERNAL for any
// other error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of an application error, or a generic
// message for any other error so internals never reach the user.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// NotFound returns the error for a missing (or someone else's) entity.
func NotFound(what string) *Error { return Errorf(ENOTFOUND, "%s not found", what) }

// MaxFieldErrors is how many field errors a validation failure lists; the
// message says how many more there were.
const MaxFieldErrors = 100

// Validation collects field errors; Err returns nil when none were added.
// Past MaxFieldErrors it only counts them, so a body of a thousand bad items
// neither grows the problem document nor the work to build it.
type Validation struct {
	Fields  []FieldError
	dropped int
}

// Add records one field error.
func (v *Validation) Add(field, code, message string) {
	if len(v.Fields) >= MaxFieldErrors {
		v.dropped++
		return
	}
	v.Fields = append(v.Fields, FieldError{Field: field, Code: code, Message: message})
}

// boundCode is the field code of a number past one of its bounds: below
// its minimum (too_small) or above its maximum (too_large).
func boundCode(below bool) string {
	if below {
		return "too_small"
	}
	return "too_large"
}

// Count is how many field errors were added, those past MaxFieldErrors
// too: a check that runs only on a valid value compares it before and
// after, and once the list is full only this grows.
func (v *Validation) Count() int { return len(v.Fields) + v.dropped }

// Has reports whether field already has an error, so checks that depend on a
// valid value can be skipped.
func (v *Validation) Has(field string) bool {
	for _, f := range v.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// Err returns a validation_failed *Error listing every field (the first
// MaxFieldErrors of them), or nil.
func (v *Validation) Err() error {
	if len(v.Fields) == 0 {
		return nil
	}
	f := v.Fields[0]
	msg := f.Field + " " + f.Message
	switch more := len(v.Fields) - 1 + v.dropped; {
	case v.dropped > 0:
		msg += fmt.Sprintf(" (and %d more errors; the first %d are listed, %d more are not)", more, len(v.Fields), v.dropped)
	case more == 1:
		msg += " (and 1 more error)"
	case more > 1:
		msg += fmt.Sprintf(" (and %d more errors)", more)
	}
	return &Error{Code: EINVALID, Message: msg, Fields: v.Fields}
}

// The instants a request may set (an offer's expiry, a waiver's end): the
// API writes them in São Paulo time with a four-digit year, which Go and
// RFC 3339 read back only from year 0 to 9999; before 1914 São Paulo's
// offset had seconds, which RFC 3339 cannot carry. The first is at UTC−3,
// as the contract and the refusal write it: São Paulo's own midnight that
// day, in daylight saving (UTC−2), is an hour earlier.
var (
	earliestInstant = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.FixedZone("", -3*60*60))
	latestInstant   = time.Date(9999, time.December, 31, 23, 59, 59, 999e6, SaoPaulo)
)

// checkInstant adds a field error unless t (when sent) is an instant the
// API can write back as it was sent.
func checkInstant(v *Validation, field string, t *time.Time) {
	switch {
	case t == nil:
	case !validOffset(*t):
		v.Add(field, "invalid", offsetMessage)
	case t.Before(earliestInstant):
		v.Add(field, "too_small", "must not be before 2000-01-01T00:00:00-03:00")
	case t.After(latestInstant):
		v.Add(field, "too_large", "must not be after 9999-12-31T23:59:59.999-03:00")
	}
}

// validOffset reports whether t, as a request sent it, has a UTC offset
// RFC 3339 can write (-23:59 to +23:59). Go reads +24:00, and +23:60 as
// +24:00, which the contract's date-time refuses: a typo read as another
// instant.
func validOffset(t time.Time) bool {
	_, off := t.Zone()
	return off > -24*3600 && off < 24*3600
}

const offsetMessage = "must have a UTC offset from -23:59 to +23:59 (RFC 3339)"

// TooLong tells whether s has more than n characters: the API's lengths
// count characters (code points), as JSON Schema's maxLength does, not the
// bytes of their UTF-8.
func TooLong(s string, n int) bool {
	return len(s) > n && utf8.RuneCountInString(s) > n
}
