package server

import (
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// ListenerLimits bound the connections of one listener, so that idle,
// slow or too many clients cannot hold the server's resources.
type ListenerLimits struct {
	ReadHeaderTimeout time.Duration // to read a request's line and headers
	ReadTimeout       time.Duration // to read a whole request, body included
	WriteTimeout      time.Duration // from a request's headers to the end of its response
	IdleTimeout       time.Duration // between requests on a kept-alive connection
	MaxConnections    int           // open at once; more wait for one to close
}

// DefaultListenerLimits are the production defaults. The write timeout
// leaves ample time for the largest page (1,000 bills) and for a 30 s CPU
// profile on the operations listener.
func DefaultListenerLimits() ListenerLimits {
	return ListenerLimits{
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxConnections:    1024,
	}
}

// MaxHeaderBytes bounds a request's line and headers. A token, an
// Idempotency-Key of 255 characters and a browser's cookies fit many times
// over; net/http's own bound (1 MiB) let each of the 1,024 connections of a
// listener hold a megabyte or more of headers, from a client without a
// token, for the 5 s it has to send them. Beyond it: 431.
const MaxHeaderBytes = 64 << 10

// NewHTTPServer returns a server of h with l's timeouts; serve it on
// LimitListener(ln, l.MaxConnections).
func NewHTTPServer(h http.Handler, l ListenerLimits, logger *slog.Logger) *http.Server {
	if l.WriteTimeout > 0 {
		// Nine tenths as d - d/10: d*9 overflowed above about 117 years
		// (PARCELA_WRITE_TIMEOUT=2000000h), a deadline already past that
		// answered every request 503.
		h = withRequestDeadline(h, l.WriteTimeout-l.WriteTimeout/10)
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: MaxHeaderBytes, ConnState: connState}
	if logger != nil {
		s.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	} else {
		s.ErrorLog = log.New(io.Discard, "", 0)
	}
	return s
}

// LimitListener serves at most n connections at once (n ≤ 0: no limit).
// Beyond n, a new client waits until one closes, and the clients after it
// in the kernel's backlog; a connection kept alive and idle between
// requests (the server's ConnState, NewHTTPServer's) is closed to make room
// for it, the longest idle first. Idle connections held their places for
// the idle timeout: one client that opened n connections and sent a
// request on each kept every other client, of every company, waiting 120 s.
func LimitListener(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}),
		idle: map[*limitedConn]time.Time{}, idled: make(chan struct{}, 1)}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu    sync.Mutex
	idle  map[*limitedConn]time.Time // kept-alive connections between requests, since when
	idled chan struct{}              // a connection went idle
}

// Accept takes the next client, then its place: one more client than n is
// accepted, and waits, so that only a client waiting closes an idle
// connection.
func (l *limitedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, l: l, release: sync.OnceFunc(func() { <-l.slots })}, nil
		default:
		}
		l.closeIdle()
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, l: l, release: sync.OnceFunc(func() { <-l.slots })}, nil
		case <-l.idled:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// closeIdle closes the connection idle the longest, if any. A request
// arriving on it as it closes is lost as at the idle timeout; clients retry
// a kept-alive connection's failure on a new one.
func (l *limitedListener) closeIdle() {
	l.mu.Lock()
	var oldest *limitedConn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back when closed, once.
type limitedConn struct {
	net.Conn
	l       *limitedListener
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// connState tells a limited listener which of its connections are idle
// between requests.
func connState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == http.StateIdle {
		l.idle[c] = time.Now()
		select {
		case l.idled <- struct{}{}:
		default:
		}
		return
	}
	delete(l.idle, c)
}

// errRequestTimeout is the cause of a request context that ran out of time.
var errRequestTimeout = errors.New("the request ran out of time")

// withRequestDeadline ends each request's context after d, a tenth short
// of the write timeout: a request stuck on the database (a lock another
// session holds, a stalled server, a connection that no longer answers)
// gives back its connection of the pool and answers 503 unavailable while
// its client can still read it. Without it the handler ran until the
// database answered, holding its connection, and its answer went to a
// socket the write timeout had closed.
func withRequestDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeoutCause(r.Context(), d, errRequestTimeout)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// ErrShuttingDown is the cause a server's base context is canceled with
// when its shutdown timeout ends on requests still running: they are
// answered 503 unavailable, which their clients retry, not 499 as if
// they had left.
var ErrShuttingDown = errors.New("the server is shutting down")

// timedOut tells whether r's context ended because the request ran out of
// its time, or the server's shutdown timeout ended it, not because its
// client left.
func timedOut(r *http.Request) bool {
	cause := context.Cause(r.Context())
	return errors.Is(cause, errRequestTimeout) || errors.Is(cause, ErrShuttingDown)
}
