package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"parcela"
)

// codeStatus maps each domain error code to its HTTP status. It is the only
// place that knows both.
var codeStatus = map[string]int{
	parcela.EMALFORMED:        http.StatusBadRequest,
	parcela.EUNAUTHORIZED:     http.StatusUnauthorized,
	parcela.ENOTFOUND:         http.StatusNotFound,
	parcela.EMETHODNOTALLOWED: http.StatusMethodNotAllowed,
	parcela.ECONFLICT:         http.StatusConflict,
	parcela.EINVALIDSTATE:     http.StatusConflict,
	parcela.EIDEMPOTENTFLIGHT: http.StatusConflict,
	parcela.EPAYLOADTOOLARGE:  http.StatusRequestEntityTooLarge,
	parcela.EUNSUPPORTEDMEDIA: http.StatusUnsupportedMediaType,
	parcela.EINVALID:          http.StatusUnprocessableEntity,
	parcela.ECREDITCARD:       http.StatusUnprocessableEntity,
	parcela.EIDEMPOTENTREUSED: http.StatusUnprocessableEntity,
	parcela.ERATELIMITED:      http.StatusTooManyRequests,
	parcela.EINTERNAL:         http.StatusInternalServerError,
	parcela.EUNAVAILABLE:      http.StatusServiceUnavailable,
}

var codeTitle = map[string]string{
	parcela.EMALFORMED:        "Malformed request",
	parcela.EUNAUTHORIZED:     "Unauthorized",
	parcela.ENOTFOUND:         "Not found",
	parcela.EMETHODNOTALLOWED: "Method not allowed",
	parcela.ECONFLICT:         "Conflict",
	parcela.EINVALIDSTATE:     "Invalid state",
	parcela.EIDEMPOTENTFLIGHT: "Request in flight",
	parcela.EPAYLOADTOOLARGE:  "Payload too large",
	parcela.EUNSUPPORTEDMEDIA: "Unsupported media type",
	parcela.EINVALID:          "Validation failed",
	parcela.ECREDITCARD:       "Credit card not supported",
	parcela.EIDEMPOTENTREUSED: "Idempotency key reused",
	parcela.ERATELIMITED:      "Too many requests",
	parcela.EINTERNAL:         "Internal error",
	parcela.EUNAVAILABLE:      "Service unavailable",
}

// Problem is an RFC 9457 problem details body.
type Problem struct {
	Type      string               `json:"type"`
	Title     string               `json:"title"`
	Status    int                  `json:"status"`
	Detail    string               `json:"detail"`
	Code      string               `json:"code"`
	RequestID string               `json:"request_id"`
	Errors    []parcela.FieldError `json:"errors,omitzero"` // nil: absent; empty: present, a validation_failed no one field broke
}

// StatusOf returns the HTTP status for an error.
func StatusOf(err error) int {
	if s, ok := codeStatus[parcela.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// writeError renders err as problem+json. Internal errors are logged with
// the request id and shown to the user as that id only; an unavailable
// service is logged once per interval and told when to retry. A failure
// because the client left is neither: it is answered 499, which nobody
// reads, and the access log says client_gone.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if StatusOf(err) >= 500 && timedOut(r) {
		// The database did not answer within the request's time, or the
		// server stopped waiting for it: an outage to retry, not the
		// client's leaving nor a bug.
		msg := "the database did not answer in time; retry later"
		if errors.Is(context.Cause(r.Context()), ErrShuttingDown) {
			msg = "the server is stopping; retry"
		}
		err = &parcela.Error{Code: parcela.EUNAVAILABLE, Message: msg, Cause: err}
	}
	code := parcela.ErrorCode(err)
	status := StatusOf(err)
	if status >= 500 && r.Context().Err() != nil && !timedOut(r) {
		w.WriteHeader(StatusClientClosed)
		return
	}
	switch status {
	case http.StatusInternalServerError:
		code = parcela.EINTERNAL
		logger(r).Error("internal error", "error", err.Error())
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", retryUnavailable)
		if suppressed, ok := outageOf(r).allow(); ok {
			logger(r).Error("unavailable", "error", err.Error(), "suppressed", suppressed)
		}
	}
	p := Problem{
		Type:      problemType(r, code),
		Title:     codeTitle[code],
		Status:    status,
		Detail:    parcela.ErrorMessage(err),
		Code:      code,
		RequestID: requestID(r),
	}
	var e *parcela.Error
	if errors.As(err, &e) {
		p.Errors = e.Fields
	}
	if code == parcela.EINVALID && p.Errors == nil {
		// A rule of the request as a whole (the company's webhooks, a
		// plan's cost): errors[] is there, as on every validation_failed,
		// and empty; detail says which rule.
		p.Errors = []parcela.FieldError{}
	}
	if status == http.StatusInternalServerError {
		p.Detail = "An internal error occurred; quote request id " + p.RequestID + " to support."
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p) // the client went away; nothing to tell it
}

// publicURLKey holds the listener's public address in a request's context.
type publicURLKey struct{}

// withPublicURL gives writeError the listener's public address, so that a
// problem's type is the absolute address of its entry in the error
// catalogue the listener serves (GET /docs/errors).
func (s *Server) withPublicURL(next http.Handler) http.Handler {
	base := strings.TrimSuffix(s.publicURL, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), publicURLKey{}, base)))
	})
}

// problemType is {public address}/docs/errors#{code}.
func problemType(r *http.Request, code string) string {
	base, _ := r.Context().Value(publicURLKey{}).(string)
	return base + "/docs/errors#" + code
}

func logger(r *http.Request) *slog.Logger {
	if l, ok := r.Context().Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// fieldErr is a one-field validation error.
func fieldErr(field, code, message string) error {
	return &parcela.Error{Code: parcela.EINVALID, Message: strings.TrimSpace(field + " " + message),
		Fields: []parcela.FieldError{{Field: field, Code: code, Message: message}}}
}
