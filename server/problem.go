package server

import (
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
	Errors    []parcela.FieldError `json:"errors,omitempty"`
}

// StatusOf returns the HTTP status for an error.
func StatusOf(err error) int {
	if s, ok := codeStatus[parcela.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// writeError renders err as problem+json. Internal errors are logged with
// the request id and shown to the user as that id only.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := parcela.ErrorCode(err)
	status := StatusOf(err)
	if status == http.StatusInternalServerError {
		code = parcela.EINTERNAL
		logger(r).Error("internal error", "error", err.Error())
	}
	p := Problem{
		Type:      "/docs/errors#" + code,
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
	if status == http.StatusInternalServerError {
		p.Detail = "An internal error occurred; quote request id " + p.RequestID + " to support."
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(p)
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
