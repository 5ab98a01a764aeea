package web

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"parcela"
)

// maxFormBytes bounds a posted form: the offer form is a few hundred bytes.
const maxFormBytes = 64 << 10

// contentSecurityPolicy allows no inline script or style, no framing, and
// forms that post only here. Images may come from the seller's https
// addresses (logo, banner).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// base wraps every request: security headers, recovery, the bounds on
// posts (size, origin, rate per client) and one log line. The line holds
// the route pattern, never the path's values, query, headers or form, so no
// access code, personal data or card reaches the log.
func (h *Handler) base(mux *http.ServeMux) http.Handler {
	origin := http.NewCrossOriginProtection()
	hsts := strings.HasPrefix(h.d.Links.PublicURL, "https://")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: no other site learns a page's
		// address (its access code), and a browser that sends no
		// Sec-Fetch-Site (Safari before 16.4) still sends the page's own
		// Origin with its forms, which the origin check compares; under
		// no-referrer it sends "Origin: null", refused, and no such payer
		// could buy or pay.
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		if hsts {
			// A payer's browser that once reached the pages over https
			// never asks for them over plain http again, where a network
			// could read the access code and the card form or rewrite the
			// Pix code. A browser ignores it over http, so it is sent
			// whenever the public address is https. Not the address's
			// other hosts (no includeSubDomains): they are the operator's.
			hd.Set("Strict-Transport-Security", "max-age=31536000")
		}
		// An id ties the access line to the request's error lines, as the
		// API's does, and is what a payer reporting a failed page can quote.
		id := parcela.NewRequestID()
		hd.Set("X-Request-Id", id)
		log := h.log.With("request_id", id)
		r = r.WithContext(context.WithValue(r.Context(), loggerKey{}, log))
		rec := &statusRecorder{ResponseWriter: w}
		_, pattern := mux.Handler(r)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				// The stack says where; it holds no form or card (see the API's).
				log.Error("panic", "route", pattern, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					h.renderError(rec, r, http.StatusInternalServerError)
				}
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "page", slog.String("method", r.Method), slog.String("route", pattern),
				slog.Int("status", rec.status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.String("environment", string(h.d.Environment)))
			if h.d.Observe != nil {
				h.d.Observe(pattern, rec.status, time.Since(start))
			}
		}()
		if pattern == "" {
			if allow := otherMethod(mux, r); allow != "" {
				rec.Header().Set("Allow", allow)
				h.renderError(rec, r, http.StatusMethodNotAllowed)
				return
			}
			h.renderError(rec, r, http.StatusNotFound)
			return
		}
		if r.Method == http.MethodPost {
			if err := origin.Check(r); err != nil {
				h.renderError(rec, r, http.StatusForbidden)
				return
			}
			if wait, ok := h.limits.allow(h.clientAddr(r)); !ok {
				h.tooMany(rec, r, wait)
				return
			}
			r.Body = http.MaxBytesReader(rec, r.Body, maxFormBytes)
		} else if pattern != assetRoute && pattern != citiesRoute {
			// Each page is a database read and a render.
			if wait, ok := h.reads.allow(h.clientAddr(r)); !ok {
				h.tooMany(rec, r, wait)
				return
			}
		}
		mux.ServeHTTP(rec, r)
	})
}

type loggerKey struct{}

// logger is the request's logger, which names its id.
func (h *Handler) logger(r *http.Request) *slog.Logger {
	if l, ok := r.Context().Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return h.log
}

// setRetryAfter sets Retry-After to wait in whole seconds, rounded up and
// at least 1 (a client waiting a second less came back into the same
// refusal), and returns them.
func setRetryAfter(w http.ResponseWriter, wait time.Duration) int {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return secs
}

// tooMany answers 429 with Retry-After in whole seconds, and tells the
// payer those seconds: a post's limit gives back a send every few seconds
// (it said "a minute"), a page's its next window.
func (h *Handler) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	secs := setRetryAfter(w, wait)
	unit := "segundos"
	if secs == 1 {
		unit = "segundo"
	}
	title := "Muitos acessos"
	msg := fmt.Sprintf("Recebemos muitos acessos deste endereço em pouco tempo. Aguarde %d %s e recarregue a página.", secs, unit)
	if r.Method == http.MethodPost {
		title = errorTexts[http.StatusTooManyRequests][0]
		msg = fmt.Sprintf("Recebemos muitos envios deste endereço. Aguarde %d %s, volte e envie de novo.", secs, unit)
	}
	h.render(w, r, http.StatusTooManyRequests, "error",
		page{Title: title, Content: errorPage{Status: http.StatusTooManyRequests, Heading: title, Message: msg}})
}

// otherMethod returns the methods the path is served under when r's is
// none of them, as an Allow header lists them (a GET page answers HEAD
// too), or "".
func otherMethod(mux *http.ServeMux, r *http.Request) string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := mux.Handler(probe); p != "" {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	return strings.Join(allow, ", ")
}
