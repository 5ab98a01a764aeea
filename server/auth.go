package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"parcela"
)

// authenticate requires a bearer token of this listener's environment and
// applies the token's rate limit. Requests without a valid token count
// against their client address's limit instead: once an address has used
// it, its next tokens are not even looked up until the window ends, but
// for those found valid within the last hour (tokenCache.known), which
// another client at the same address is not to lock out.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The address is read (and hashed) only on the paths that count it:
		// a request with a valid cached token never needs it.
		addrKey := sync.OnceValue(func() string { return addressKey(clientAddress(r, s.trustedProxies)) })
		// Two Authorization headers are no credential: a proxy in front
		// may have checked or logged the other one.
		token, ok := "", false
		if h := r.Header.Values("Authorization"); len(h) == 1 {
			token, ok = bearerToken(h[0])
		}
		if !ok {
			if s.refuseAddress(w, r, addrKey()) {
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="parcela"`)
			writeError(w, r, parcela.Errorf(parcela.EUNAUTHORIZED, "send a token as Authorization: Bearer <token>"))
			return
		}
		t, cached := s.tokens.cached(token)
		if !cached {
			if wait, full := s.unauthenticated.exhausted(addrKey()); full && !s.tokens.knownValid(token) {
				s.tooMany(w, r, wait, unauthenticatedMessage)
				return
			}
			var err error
			if t, err = s.tokens.lookup(r.Context(), token); err != nil {
				if parcela.ErrorCode(err) == parcela.EUNAUTHORIZED {
					if s.refuseAddress(w, r, addrKey()) {
						return
					}
					// Only a refused token is challenged: a lookup that
					// failed (503) says nothing of the token.
					w.Header().Set("WWW-Authenticate", `Bearer realm="parcela", error="invalid_token"`)
				}
				writeError(w, r, err)
				return
			}
		}
		if t.Environment != s.env {
			if s.refuseAddress(w, r, addrKey()) {
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="parcela", error="invalid_token"`)
			writeError(w, r, parcela.Errorf(parcela.EUNAUTHORIZED, "this is a %s token; use it on the %s address", t.Environment, t.Environment))
			return
		}
		if wait, ok := s.perToken.allow(r.Context(), logger(r), t.ID); !ok {
			s.tooMany(w, r, wait, fmt.Sprintf("this token's limit of %s requests per second is used up", s.perToken.rate()))
			return
		}
		a := parcela.Auth{CompanyID: t.CompanyID, Environment: t.Environment, TokenID: t.ID}
		if logged, ok := r.Context().Value(logCompanyKey{}).(*string); ok {
			*logged = a.CompanyID
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, a)))
	})
}

// bearerToken reads "Bearer <token>"; the scheme's name is
// case-insensitive (RFC 9110, section 11.1).
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

// refuseAddress counts a request without a valid token against its client
// address and answers 429 when the address has used its allowance.
func (s *Server) refuseAddress(w http.ResponseWriter, r *http.Request, addr string) bool {
	wait, ok := s.unauthenticated.allow(r.Context(), logger(r), addr)
	if !ok {
		s.tooMany(w, r, wait, unauthenticatedMessage)
	}
	return !ok
}

const unauthenticatedMessage = "too many requests without a valid token from this address"

// tooMany answers 429 with Retry-After in whole seconds.
func (s *Server) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, msg string) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, r, parcela.Errorf(parcela.ERATELIMITED, "%s; retry in %d s", msg, secs))
}
