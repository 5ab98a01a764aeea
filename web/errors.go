package web

import (
	"errors"
	"net/http"

	"parcela"
)

// fail answers a request whose use case failed with an error page. Only
// internal errors are logged: the others are the payer's (a wrong link).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	switch code := parcela.ErrorCode(err); {
	case errors.As(err, &tooLarge):
		h.renderError(w, r, http.StatusRequestEntityTooLarge)
	case code == parcela.ENOTFOUND:
		h.renderError(w, r, http.StatusNotFound)
	case code == parcela.ERATELIMITED:
		h.renderError(w, r, http.StatusTooManyRequests)
	case code == parcela.EUNAVAILABLE:
		h.renderError(w, r, http.StatusServiceUnavailable)
	default:
		h.log.Error("page failed", "method", r.Method, "route", r.Pattern, "code", code, "error", err.Error())
		h.renderError(w, r, http.StatusInternalServerError)
	}
}

// fieldsOf returns a validation error's fields, or nil.
func fieldsOf(err error) []parcela.FieldError {
	var e *parcela.Error
	if errors.As(err, &e) && e.Code == parcela.EINVALID {
		return e.Fields
	}
	return nil
}
