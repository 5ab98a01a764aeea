package web

import (
	"context"
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
	case code == parcela.EUNAVAILABLE, code == parcela.ECONFLICT:
		// The database out, or a read still colliding after its retries
		// (nothing done): a moment to reload after, as the API says.
		h.unavailable(w, r)
	case r.Context().Err() != nil:
		// No failure of the page's: its client left (nothing to answer,
		// 499 as the API logs it), or its time or the server's shutdown
		// ended it, a database outage to reload after (503).
		if errors.Is(context.Cause(r.Context()), context.Canceled) {
			w.WriteHeader(499)
			return
		}
		h.unavailable(w, r)
	default:
		h.logger(r).Error("page failed", "method", r.Method, "route", r.Pattern, "code", code, "error", err.Error())
		h.renderError(w, r, http.StatusInternalServerError)
	}
}

// unavailable answers the 503 page, with the seconds after which a reload
// may find the server back, as the API's 503s carry them.
func (h *Handler) unavailable(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "5")
	h.renderError(w, r, http.StatusServiceUnavailable)
}

// fieldsOf returns a validation error's fields, or nil.
func fieldsOf(err error) []parcela.FieldError {
	var e *parcela.Error
	if errors.As(err, &e) && e.Code == parcela.EINVALID {
		return e.Fields
	}
	return nil
}

// parseForm parses the posted form, or answers and reports false: a body
// or query that is not form encoding (a bad escape) is the client's
// error, 400, as a body over the bound is a 413, neither a failure of the
// pages.
func (h *Handler) parseForm(w http.ResponseWriter, r *http.Request) bool {
	err := r.ParseForm()
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooLarge):
		h.renderError(w, r, http.StatusRequestEntityTooLarge)
	default:
		h.renderError(w, r, http.StatusBadRequest)
	}
	return false
}
