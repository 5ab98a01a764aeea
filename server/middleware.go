package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"time"

	"parcela"
)

type (
	loggerKey    struct{}
	requestIDKey struct{}
	authKey      struct{}
	// logCompanyKey holds where the access log line finds the company
	// that authentication names: the authenticated request is a new
	// request, whose context the line, written by base, never sees.
	logCompanyKey struct{}
)

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

func authOf(r *http.Request) parcela.Auth {
	a, _ := r.Context().Value(authKey{}).(parcela.Auth)
	return a
}

// statusRecorder remembers the status for the access log.
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

// base wraps every request: request id, recovery, one access-log line, and
// problem bodies for unknown routes and wrong methods. The log line carries
// no query string, header or body, so no token or personal data reaches it.
func (s *Server) base(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := parcela.NewRequestID()
		w.Header().Set("X-Request-Id", id)
		// Every answer is what its Content-Type says; and none is kept by
		// a cache unless its handler says so (the payment images): an
		// order carries its customer's CPF, email and phone.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		clean := cleanPath(r.URL.EscapedPath())
		_, pattern := mux.Handler(r)
		if !clean {
			pattern = "" // the cleaned path's, which this request does not take
		}
		log := s.log.With("request_id", id)
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		ctx = context.WithValue(ctx, loggerKey{}, log)
		ctx = context.WithValue(ctx, outageKey{}, s.outage)
		var companyID string
		ctx = context.WithValue(ctx, logCompanyKey{}, &companyID)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				// The stack says where: the value alone ("invalid memory
				// address") names no function. It holds code addresses and
				// argument words, never a request's body or headers.
				log.Error("panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			attrs := []slog.Attr{
				slog.String("method", r.Method), slog.String("route", pattern),
				slog.Int("status", rec.status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.String("environment", string(s.env)),
			}
			if companyID != "" {
				attrs = append(attrs, slog.String("company_id", companyID))
			}
			if rec.status == StatusClientClosed {
				attrs = append(attrs, slog.Bool("client_gone", true))
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
			s.metrics.observe(s.env, pattern, rec.status, time.Since(start))
		}()
		if !clean {
			// The mux would redirect it (307) to its cleaned path, and a
			// client following that sent its POST again to a path it never
			// named: no route of the API has such a path.
			writeError(rec, r, parcela.Errorf(parcela.ENOTFOUND, "no route %s %s", r.Method, r.URL.Path))
			return
		}
		if pattern == "" {
			s.noRoute(mux, rec, r)
			return
		}
		mux.ServeHTTP(rec, r)
	})
}

// noRoute answers 405 with Allow when the path exists under another method,
// 404 otherwise.
func (s *Server) noRoute(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	var allow, use []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := mux.Handler(probe); p != "" {
			use, allow = append(use, m), append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead) // the mux answers it as GET, without the body
			}
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, r, parcela.Errorf(parcela.EMETHODNOTALLOWED, "%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(use, ", ")))
		return
	}
	writeError(w, r, parcela.Errorf(parcela.ENOTFOUND, "no route %s %s", r.Method, r.URL.Path))
}

// cleanPath tells whether p is as ServeMux cleans a path: rooted, without
// a doubled slash or a dot segment (a trailing slash is kept).
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}
