package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"parcela/server"
)

// serveLimited serves a plain handler on 127.0.0.1 with limits l.
func serveLimited(t *testing.T, l server.ListenerLimits) string {
	t.Helper()
	return serveLimitedBehind(t, l, nil)
}

// closedWithin reads c until the server closes it, and fails unless that
// happens within d.
func closedWithin(t *testing.T, c net.Conn, d time.Duration, what string) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(d)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("%s: the connection was still open after %v", what, d)
	}
}

// A client that trickles its headers a byte at a time is cut off at the
// header timeout, however steadily it sends.
func TestListenerClosesTricklingClient(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.ReadHeaderTimeout = 300 * time.Millisecond
	addr := serveLimited(t, l)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	go func() {
		for _, b := range []byte("GET / HTTP/1.1\r\nHost: parcela\r\nX-Slow: " + strings.Repeat("a", 100)) {
			if _, err := c.Write([]byte{b}); err != nil {
				return // closed by the server
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	closedWithin(t, c, 3*time.Second, "trickling headers")
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("closed after %v, before the header timeout", d)
	}
}

// A write timeout of years still leaves a request its time: nine tenths
// of 2,000,000 hours (which PARCELA_WRITE_TIMEOUT takes) overflowed into a
// deadline already past.
func TestListenerHugeWriteTimeout(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.WriteTimeout = 2000000 * time.Hour
	var ctxErr error
	srv := server.NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctxErr = r.Context().Err()
	}), l, nil)
	srv.Handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if ctxErr != nil {
		t.Fatalf("a request under a write timeout of %v began with its context done: %v", l.WriteTimeout, ctxErr)
	}
}

// A kept-alive connection that goes idle is closed at the idle timeout.
func TestListenerClosesIdleConnection(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.IdleTimeout = 300 * time.Millisecond
	addr := serveLimited(t, l)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: parcela\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("first request: %v", err)
	}
	res.Body.Close()
	closedWithin(t, c, 3*time.Second, "idle keep-alive")
}

// Beyond the maximum of open connections a new client is not served until
// one of them closes.
func TestListenerMaxConnections(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections = 2
	addr := serveLimited(t, l)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	third, err := net.Dial("tcp", addr) // the kernel's backlog takes it
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	io.WriteString(third, "GET / HTTP/1.1\r\nHost: parcela\r\n\r\n")
	if err := third.SetReadDeadline(time.Now().Add(500 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := third.Read(make([]byte, 1)); err == nil {
		t.Fatal("a third connection was served while two were open")
	}
	held[0].Close()
	if err := third.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("after one closed: %v", err)
	}
	res.Body.Close()
}

// Connections kept alive and idle give their places to new clients when
// every place is taken: one client that opened MaxConnections, sent a
// request on each and kept them, held the listener from every other
// client (of every company) for the idle timeout, 120 s.
func TestListenerIdleConnectionsMakeRoom(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections = 2
	addr := serveLimited(t, l)
	request := func(c net.Conn) error {
		if err := c.SetDeadline(time.Now().Add(3 * time.Second)); err != nil {
			return err
		}
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: parcela\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		res.Body.Close()
		return nil
	}
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := request(c); err != nil {
			t.Fatal(err)
		}
	}
	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if err := request(third); err != nil {
		t.Fatalf("a new client behind two idle keep-alive connections: %v", err)
	}
}

// Headers are bounded at MaxHeaderBytes, not net/http's 1 MiB: a request
// whose headers are over it is answered 431 without reaching a handler,
// and one with headers of the size a browser sends is served.
func TestListenerHeaderSizeLimit(t *testing.T) {
	t.Parallel()
	addr := serveLimited(t, server.DefaultListenerLimits())
	// get sends a request line and headers of total bytes, their blank
	// line included.
	get := func(total int) int {
		t.Helper()
		const head, tail = "GET / HTTP/1.1\r\nHost: parcela\r\nCookie: a=", "\r\n\r\n"
		headerBytes := total - len(head) - len(tail)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		go io.WriteString(c, head+strings.Repeat("a", headerBytes)+tail)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("headers of %d bytes: %v", headerBytes, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(16 << 10); code != http.StatusOK {
		t.Errorf("headers of 16 KiB: %d, want 200", code)
	}
	if code := get(server.MaxHeaderBytes); code != http.StatusOK {
		t.Errorf("headers of the limit exactly: %d, want 200", code)
	}
	// net/http reads 4 KiB past its own MaxHeaderBytes: set at 64 KiB,
	// headers 1 or 3 KiB over it were served.
	for _, over := range []int{1, 1 << 10, 3 << 10, 8 << 10} {
		if code := get(server.MaxHeaderBytes + over); code != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("headers %d bytes over the limit: %d, want 431", over, code)
		}
	}
	if code := get(512 << 10); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("headers of 512 KiB: %d, want 431", code)
	}
}
