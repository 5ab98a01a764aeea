package server

import (
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"parcela"
	"parcela/forwarded"
)

// ListenerLimits bound the connections of one listener, so that idle,
// slow or too many clients cannot hold the server's resources.
type ListenerLimits struct {
	ReadHeaderTimeout time.Duration // to read a request's line and headers
	ReadTimeout       time.Duration // to read a whole request, body included
	WriteTimeout      time.Duration // from a request's headers to the end of its response
	IdleTimeout       time.Duration // between requests on a kept-alive connection
	MaxConnections    int           // open at once; more wait for one to close
	// MaxConnectionsPerAddress bounds what one client address (an IPv6
	// /64) holds of MaxConnections, a trusted proxy's own excepted; 0: no
	// bound. One address that opened every connection and sent a body a
	// byte at a time held the listener from every other client for the
	// read timeout.
	MaxConnectionsPerAddress int
}

// DefaultListenerLimits are the production defaults. The write timeout
// leaves ample time for the largest page (1,000 bills) and for a 30 s CPU
// profile on the operations listener. An address holds at most a quarter
// of the connections: an integrator's pool or a carrier's NAT fits in it
// many times over.
func DefaultListenerLimits() ListenerLimits {
	return ListenerLimits{
		ReadHeaderTimeout:        5 * time.Second,
		ReadTimeout:              30 * time.Second,
		WriteTimeout:             60 * time.Second,
		IdleTimeout:              120 * time.Second,
		MaxConnections:           1024,
		MaxConnectionsPerAddress: 256,
	}
}

// MaxHeaderBytes bounds a request's line and headers. A token, an
// Idempotency-Key of 255 characters and a browser's cookies fit many times
// over; net/http's own bound (1 MiB) let each of the 1,024 connections of a
// listener hold a megabyte or more of headers, from a client without a
// token, for the 5 s it has to send them. Beyond it: 431.
const MaxHeaderBytes = 64 << 10

// netHTTPHeaderSlop is what net/http reads past its MaxHeaderBytes (its
// "bufio slop"): given 64 KiB, it served headers of 67.
const netHTTPHeaderSlop = 4096

// NewHTTPServer returns a server of h with l's timeouts; serve it on
// LimitListener(ln, l, trusted proxies).
func NewHTTPServer(h http.Handler, l ListenerLimits, logger *slog.Logger) *http.Server {
	if l.WriteTimeout > 0 {
		// Nine tenths as d - d/10: d*9 overflowed above about 117 years
		// (PARCELA_WRITE_TIMEOUT=2000000h), a deadline already past that
		// answered every request 503.
		h = withRequestDeadline(h, l.WriteTimeout-l.WriteTimeout/10)
	}
	s := &http.Server{Handler: refuseOverShare(h, logger), ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: MaxHeaderBytes - netHTTPHeaderSlop, ConnState: connState,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if lc, ok := c.(*limitedConn); ok && lc.refused {
				return context.WithValue(ctx, overShareKey{}, lc.l.perAddress)
			}
			return ctx
		}}
	if logger != nil {
		s.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	} else {
		s.ErrorLog = log.New(io.Discard, "", 0)
	}
	return s
}

// overShareKey marks the requests of a connection its address had no
// room for; its value is the address's share.
type overShareKey struct{}

// refusedLogEvery: the log says that connections were refused once per
// interval, with how many, since a client that exceeds its share does so
// at every connection it opens.
const refusedLogEvery = time.Minute

// refusedDrain is how long a refused connection's unread body is read
// and dropped after its answer, so that the client, still sending, reads
// the answer rather than a reset.
const refusedDrain = 500 * time.Millisecond

// refuseOverShare answers each request of a connection over its address's
// share 429, and closes the connection: the client is told why, and its
// next connection is counted afresh.
func refuseOverShare(h http.Handler, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	throttle := &throttledLog{clock: parcela.SystemClock{}, every: refusedLogEvery}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		share, ok := r.Context().Value(overShareKey{}).(int)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		id := parcela.NewRequestID()
		if suppressed, ok := throttle.allow(); ok {
			// Not the address: the log holds no client's address.
			logger.Warn("connection refused: its address holds its share of the listener's connections",
				"request_id", id, "share", share, "suppressed", suppressed)
		}
		// The body is not read: after the answer the server would read and
		// drop up to 256 KB of it before closing, for as long as the read
		// timeout (30 s), so a body sent a byte at a time held a refused
		// connection's place that long. Half a second, then it closes.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedDrain))
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		writeError(w, r, parcela.Errorf(parcela.ERATELIMITED,
			"this address has %d connections open, as many as one address may; send on those (they are kept alive between requests), or retry in 1 s", share))
	})
}

// LimitListener serves at most l.MaxConnections connections at once (≤ 0:
// no limit, and no bound per address). Beyond it, a new client waits until
// one closes, and the clients after it in the kernel's backlog; a
// connection kept alive and idle between requests (the server's ConnState,
// NewHTTPServer's) is closed to make room for it, the longest idle first.
// Idle connections held their places for the idle timeout: one client that
// opened n connections and sent a request on each kept every other client,
// of every company, waiting 120 s.
//
// One address (forwarded.Network's) holds at most
// l.MaxConnectionsPerAddress of them, unless it is one of the trusted
// proxies, whose connections are their clients'. A connection beyond it
// closes the address's own longest idle one if there is one; else it takes
// no place, and its request is answered 429 (refuseOverShare). At most
// refusingMax such connections are open at once; beyond them a connection
// over its share is closed unanswered.
func LimitListener(ln net.Listener, l ListenerLimits, trusted []netip.Prefix) net.Listener {
	if l.MaxConnections <= 0 {
		return ln
	}
	return &limitedListener{Listener: ln, slots: make(chan struct{}, l.MaxConnections), done: make(chan struct{}),
		perAddress: l.MaxConnectionsPerAddress, trusted: trusted, held: map[netip.Addr]int{}, refusing: make(chan struct{}, refusingMax),
		idle: map[*limitedConn]time.Time{}, idled: make(chan struct{}, 1)}
}

// refusingMax bounds the connections open only to be answered 429, each
// for at most the header timeout and refusedDrain.
const refusingMax = 64

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	perAddress int
	trusted    []netip.Prefix
	refusing   chan struct{}

	mu    sync.Mutex
	idle  map[*limitedConn]time.Time // kept-alive connections between requests, since when
	idled chan struct{}              // a connection went idle
	held  map[netip.Addr]int         // connections open by address, of those bounded
}

// Accept takes the next client, then its place: one more client than n is
// accepted, and waits, so that only a client waiting closes an idle
// connection.
func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := l.bounded(c)
		if addr.IsValid() && !l.admit(addr) {
			select {
			case l.refusing <- struct{}{}:
				return &limitedConn{Conn: c, l: l, refused: true, release: sync.OnceFunc(func() { <-l.refusing })}, nil
			default:
				c.Close()
				continue
			}
		}
		lc, err := l.place(c, addr)
		if err != nil {
			l.leave(addr)
		}
		return lc, err
	}
}

// place waits for c's place among the listener's connections.
func (l *limitedListener) place(c net.Conn, addr netip.Addr) (net.Conn, error) {
	conn := func() net.Conn {
		return &limitedConn{Conn: c, l: l, addr: addr, release: sync.OnceFunc(func() { <-l.slots; l.leave(addr) })}
	}
	for {
		select {
		case l.slots <- struct{}{}:
			return conn(), nil
		default:
		}
		l.closeIdle(nil)
		select {
		case l.slots <- struct{}{}:
			return conn(), nil
		case <-l.idled:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// bounded is the address whose share c counts against, or the invalid
// address if none: no bound, a trusted proxy, or a peer unreadable.
func (l *limitedListener) bounded(c net.Conn) netip.Addr {
	if l.perAddress <= 0 {
		return netip.Addr{}
	}
	peer := forwarded.Parse(c.RemoteAddr().String())
	if !peer.IsValid() || forwarded.Trusted(peer, l.trusted) {
		return netip.Addr{}
	}
	return forwarded.Network(peer)
}

// admit counts a connection against addr's share, closing the address's
// longest idle connection to make room if it must; false if it has none.
func (l *limitedListener) admit(addr netip.Addr) bool {
	for {
		l.mu.Lock()
		if l.held[addr] < l.perAddress {
			l.held[addr]++
			l.mu.Unlock()
			return true
		}
		l.mu.Unlock()
		if !l.closeIdle(func(c *limitedConn) bool { return c.addr == addr }) {
			return false
		}
	}
}

// leave gives back a connection's count against its address's share.
func (l *limitedListener) leave(addr netip.Addr) {
	if !addr.IsValid() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[addr]--; l.held[addr] <= 0 {
		delete(l.held, addr)
	}
}

// closeIdle closes the connection idle the longest of those match takes
// (nil: of all), if any. A request arriving on it as it closes is lost as
// at the idle timeout; clients retry a kept-alive connection's failure on
// a new one.
func (l *limitedListener) closeIdle(match func(*limitedConn) bool) bool {
	l.mu.Lock()
	var oldest *limitedConn
	var since time.Time
	for c, t := range l.idle {
		if (match == nil || match(c)) && (oldest == nil || t.Before(since)) {
			oldest, since = c, t
		}
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	if oldest == nil {
		return false
	}
	oldest.Close()
	return true
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its place back when closed, once.
type limitedConn struct {
	net.Conn
	l       *limitedListener
	addr    netip.Addr // whose share it counts against, if valid
	refused bool       // over its address's share: answered 429
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// CloseWrite passes the TCP connection's through: net/http sends a FIN
// with it before closing a connection it answered "Connection: close" on,
// so the client reads the answer rather than a reset.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connState tells a limited listener which of its connections are idle
// between requests.
func connState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok || c.refused {
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
