package server

import (
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// serveCounted serves a plain handler on a limited listener whose counts
// the test reads; stop closes it.
func serveCounted(t *testing.T, l ListenerLimits) (string, *limitedListener, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}), l, nil)
	ll := LimitListener(ln, l, nil).(*limitedListener)
	done := make(chan struct{})
	go func() { _ = srv.Serve(ll); close(done) }()
	return ln.Addr().String(), ll, func() { srv.Close(); <-done }
}

// dialCounted connects from the loopback address from; nil (and the test
// failed) if it could not.
func dialCounted(t *testing.T, from, addr string) net.Conn {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return nil
	}
	return c
}

// counts are the listener's counts, summed.
func (l *limitedListener) counts() (held, slots, refusing, idle int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.held {
		held += n
	}
	return held, len(l.slots), len(l.refusing), len(l.idle)
}

// The listener's counts (per address, places, refused places, idle
// connections) all come back to zero after concurrent accepts, kept-alive
// requests, idle connections closed for room, refusals and closes.
func TestListenerCountsReturnToZero(t *testing.T) {
	t.Parallel()
	l := DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 4, 2
	l.ReadHeaderTimeout = 500 * time.Millisecond
	addr, ll, stop := serveCounted(t, l)
	defer stop()
	var wg sync.WaitGroup
	for i := range 24 {
		from := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}[i%3]
		wg.Go(func() {
			for range 15 {
				c := dialCounted(t, from, addr)
				if c == nil {
					return
				}
				_ = c.SetDeadline(time.Now().Add(3 * time.Second))
				for range rand.IntN(3) {
					io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
					buf := make([]byte, 512)
					_, _ = c.Read(buf)
				}
				if rand.IntN(4) == 0 {
					time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
				}
				c.Close()
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		held, slots, refusing, idle := ll.counts()
		if held == 0 && slots == 0 && refusing == 0 && idle == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after every client closed: held %d, slots %d, refusing %d, idle %d", held, slots, refusing, idle)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A connection counted against its address's share that waits for a
// place when the listener closes gives its count back.
func TestListenerCloseWhileWaitingGivesCountBack(t *testing.T) {
	t.Parallel()
	l := DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 1, 1
	addr, ll, stop := serveCounted(t, l)
	a := dialCounted(t, "127.0.0.2", addr)
	defer a.Close()
	io.WriteString(a, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
	b := dialCounted(t, "127.0.0.1", addr)
	defer b.Close()
	time.Sleep(300 * time.Millisecond)
	if held, _, _, _ := ll.counts(); held != 2 {
		t.Fatalf("held %d, want 2 (one waiting)", held)
	}
	stop()
	time.Sleep(100 * time.Millisecond)
	if held, slots, _, _ := ll.counts(); held != 0 || slots != 0 {
		t.Fatalf("after close: held %d slots %d", held, slots)
	}
}
