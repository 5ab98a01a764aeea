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

// NewHTTPServer returns a server of h with l's timeouts; serve it on
// LimitListener(ln, l.MaxConnections).
func NewHTTPServer(h http.Handler, l ListenerLimits, logger *slog.Logger) *http.Server {
	if l.WriteTimeout > 0 {
		h = withRequestDeadline(h, l.WriteTimeout*9/10)
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout}
	if logger != nil {
		s.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	} else {
		s.ErrorLog = log.New(io.Discard, "", 0)
	}
	return s
}

// LimitListener accepts at most n connections at once (n ≤ 0: no limit).
// Beyond n, Accept waits until one closes, and new clients wait in the
// kernel's backlog.
func LimitListener(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back when closed, once.
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
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
