package server

import (
	"net/http"
	"sync"
	"time"

	"parcela"
)

// StatusClientClosed is the status logged and counted for a request whose
// client went away before its answer (nginx's 499): the failure it caused
// is not the server's, so it is no 500.
const StatusClientClosed = 499

// retryUnavailable is the Retry-After, in seconds, of a 503.
const retryUnavailable = "5"

// outageLogEvery: while the database (or a provider) is unavailable, every
// request fails alike; the log says so once per interval, with how many
// failures it left out, instead of once per request.
const outageLogEvery = 10 * time.Second

// throttledLog lets one line through per interval and counts the others.
type throttledLog struct {
	clock      parcela.Clock
	every      time.Duration
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// allow reports whether to log now and, if so, how many lines were left out
// since the last one.
func (l *throttledLog) allow() (suppressed int, ok bool) {
	if l == nil {
		return 0, true
	}
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < l.every {
		l.suppressed++
		return 0, false
	}
	suppressed, l.suppressed, l.last = l.suppressed, 0, now
	return suppressed, true
}

type outageKey struct{}

// outageOf is the listener's throttle for unavailable errors (nil: none,
// every one is logged).
func outageOf(r *http.Request) *throttledLog {
	l, _ := r.Context().Value(outageKey{}).(*throttledLog)
	return l
}
