package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"parcela/server"
)

// serveLimitedBehind is serveLimited with trusted proxies.
func serveLimitedBehind(t *testing.T, l server.ListenerLimits, trusted []netip.Prefix) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}), l, nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(server.LimitListener(ln, l, trusted)) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; err != http.ErrServerClosed {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// dialFrom connects to addr from the loopback address from (127.0.0.0/8
// is all the loopback's on Linux), closed at the test's end.
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stall sends a request whose body never comes, as the audit's client did.
func stall(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: parcela\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
}

// getOn sends a GET on c and reads its answer within 5 s.
func getOn(t *testing.T, c net.Conn) (*http.Response, []byte) {
	t.Helper()
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: parcela\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET from %s: %v", c.LocalAddr(), err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// One address whose connections each send a body a byte at a time (here,
// none after the first) holds its share of the listener, not all of it:
// another address is served at once, and the address's next connection is
// told why it is refused, in the API's problem form, and closed. Before
// the bound, four such connections kept every client waiting for the read
// timeout, 30 s in production.
func TestListenerBoundsConnectionsPerAddress(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 4, 2
	addr := serveLimitedBehind(t, l, nil)
	for range 2 {
		stall(t, dialFrom(t, "127.0.0.1", addr))
	}

	over := dialFrom(t, "127.0.0.1", addr)
	res, body := getOn(t, over)
	var p server.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("a refused connection's answer is no problem: %v: %s", err, body)
	}
	if res.StatusCode != http.StatusTooManyRequests || p.Code != "rate_limited" || p.Status != 429 || p.RequestID == "" ||
		res.Header.Get("Retry-After") != "1" || !res.Close || res.Header.Get("X-Request-Id") != p.RequestID {
		t.Fatalf("over its address's share: %d %+v %v", res.StatusCode, p, res.Header)
	}
	closedWithin(t, over, 3*time.Second, "a refused connection")

	if res, body := getOn(t, dialFrom(t, "127.0.0.2", addr)); res.StatusCode != 200 || string(body) != "ok" {
		t.Fatalf("another address, beside one holding its share: %d %s", res.StatusCode, body)
	}
}

// A connection over its address's share closes the address's own longest
// idle connection rather than be refused: a client that keeps connections
// alive and opens new ones (a pool that grew) is served, at no other
// client's cost.
func TestListenerAddressIdleConnectionMakesRoom(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 8, 1
	addr := serveLimitedBehind(t, l, nil)
	other := dialFrom(t, "127.0.0.2", addr)
	if res, _ := getOn(t, other); res.StatusCode != 200 {
		t.Fatalf("another address: %d", res.StatusCode)
	}
	first := dialFrom(t, "127.0.0.1", addr)
	if res, _ := getOn(t, first); res.StatusCode != 200 {
		t.Fatalf("first: %d", res.StatusCode)
	}
	// net/http marks a connection idle once it has sent the response, and
	// the client may read the response before that (it did, once, on a
	// loaded machine): the first connection is idle soon, not at once.
	status := 0
	for deadline := time.Now().Add(3 * time.Second); status != 200 && time.Now().Before(deadline); {
		res, _ := getOn(t, dialFrom(t, "127.0.0.1", addr))
		if status = res.StatusCode; status != 200 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if status != 200 {
		t.Fatalf("a second connection beside an idle one of its address: %d", status)
	}
	closedWithin(t, first, 3*time.Second, "the address's idle connection")
	if res, _ := getOn(t, other); res.StatusCode != 200 {
		t.Fatalf("another address's idle connection was closed: %d", res.StatusCode)
	}
}

// A connection refused for its address takes no place of the listener's:
// with every other place free, the other addresses are all served.
func TestListenerRefusedConnectionTakesNoPlace(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 3, 1
	addr := serveLimitedBehind(t, l, nil)
	stall(t, dialFrom(t, "127.0.0.1", addr))
	for range 5 {
		dialFrom(t, "127.0.0.1", addr) // refused, silent
	}
	stall(t, dialFrom(t, "127.0.0.2", addr))
	if res, _ := getOn(t, dialFrom(t, "127.0.0.3", addr)); res.StatusCode != 200 {
		t.Fatalf("the third place, beside refused connections: %d", res.StatusCode)
	}
}

// A trusted proxy's connections are its clients', so they are not bounded
// as one address's.
func TestListenerTrustedProxyIsNotBounded(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 8, 1
	addr := serveLimitedBehind(t, l, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})
	for range 3 {
		stall(t, dialFrom(t, "127.0.0.1", addr))
	}
	if res, _ := getOn(t, dialFrom(t, "127.0.0.1", addr)); res.StatusCode != 200 {
		t.Fatalf("a trusted proxy's fourth connection: %d", res.StatusCode)
	}
	stall(t, dialFrom(t, "127.0.0.2", addr))
	if res, _ := getOn(t, dialFrom(t, "127.0.0.2", addr)); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("an untrusted address's second connection: %d", res.StatusCode)
	}
}

// Connections open only to be refused are bounded too: past them, one
// over its share is closed unanswered, so that a client cannot hold the
// server's memory with refused connections either.
func TestListenerBoundsRefusedConnections(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 4, 1
	addr := serveLimitedBehind(t, l, nil)
	stall(t, dialFrom(t, "127.0.0.1", addr))
	const refusing = 64 // server's refusingMax
	for range refusing {
		dialFrom(t, "127.0.0.1", addr)
	}
	closedWithin(t, dialFrom(t, "127.0.0.1", addr), 3*time.Second, "a connection past the refused ones")
	if res, _ := getOn(t, dialFrom(t, "127.0.0.2", addr)); res.StatusCode != 200 {
		t.Fatalf("another address: %d", res.StatusCode)
	}
}

// A refused connection's body is not read for the read timeout: the 429
// handler does not read it, and net/http read and dropped up to 256 KB of
// it after the answer for as long as the read timeout (30 s in
// production), so a body sent a byte at a time held one of the refused
// places that long, not the header timeout.
func TestListenerRefusedBodyIsNotReadForTheReadTimeout(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 4, 1
	l.ReadHeaderTimeout, l.ReadTimeout = 300*time.Millisecond, 6*time.Second
	addr := serveLimitedBehind(t, l, nil)
	stall(t, dialFrom(t, "127.0.0.1", addr))

	over := dialFrom(t, "127.0.0.1", addr)
	if err := over.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	stall(t, over) // headers, then one byte of a 100-byte body
	res, err := http.ReadResponse(bufio.NewReader(over), nil)
	if err != nil || res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("refused: %v %v", res, err)
	}
	io.Copy(io.Discard, res.Body)
	start := time.Now()
	closedWithin(t, over, 8*time.Second, "refused")
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a refused connection answered 429 stayed open %v more (read timeout %v, header timeout %v)",
			d.Round(100*time.Millisecond), l.ReadTimeout, l.ReadHeaderTimeout)
	}
}

// One address at its share cannot hold the refused places with bodies
// sent a byte at a time: past the header timeout and the drain, another
// address's connection over its own share is still answered 429, where
// it was closed unanswered for the read timeout.
func TestListenerOneAddressCannotHoldTheRefusedPlaces(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 8, 1
	l.ReadHeaderTimeout, l.ReadTimeout = 300*time.Millisecond, 6*time.Second
	addr := serveLimitedBehind(t, l, nil)
	stall(t, dialFrom(t, "127.0.0.1", addr))
	for range 64 {
		stall(t, dialFrom(t, "127.0.0.1", addr))
	}
	time.Sleep(1500 * time.Millisecond) // past the header timeout and the drain
	stall(t, dialFrom(t, "127.0.0.2", addr))
	res, _ := getOn(t, dialFrom(t, "127.0.0.2", addr))
	if res == nil || res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("another address over its share, after one address's refused connections sent their headers: no 429 (%v)", res)
	}
}

// A Go client whose refused request carries a large body reads the 429,
// not a reset.
func TestListenerRefusedLargeBodyIsAnsweredToAGoClient(t *testing.T) {
	t.Parallel()
	l := server.DefaultListenerLimits()
	l.MaxConnections, l.MaxConnectionsPerAddress = 4, 1
	addr := serveLimitedBehind(t, l, nil)
	stall(t, dialFrom(t, "127.0.0.1", addr))
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1")}}).DialContext}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Post("http://"+addr+"/", "application/json",
		bytes.NewReader(make([]byte, 8<<20)))
	if err != nil {
		t.Fatalf("a refused POST of 8 MiB: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 429 {
		t.Fatalf("%d", res.StatusCode)
	}
}
