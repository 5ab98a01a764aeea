package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Every server here listens on 127.0.0.1 (httptest's default); no test sends
// traffic anywhere else.

func localSender(t *testing.T, timeout time.Duration) *Sender {
	t.Helper()
	p, err := NewAddressPolicy("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	return NewSender(p, timeout)
}

func newSecret(t *testing.T) string {
	t.Helper()
	s, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func request(url string, secrets ...string) Request {
	return Request{
		URL:       url,
		MsgID:     "msg_test",
		Timestamp: time.Now(),
		Body:      []byte(`{"type":"payment.paid"}`),
		Secrets:   secrets,
	}
}

func TestSendDeliversSignedRequest(t *testing.T) {
	oldSecret, newSecretValue := newSecret(t), newSecret(t)
	type received struct {
		method string
		header http.Header
		body   []byte
	}
	got := make(chan received, 1)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{r.Method, r.Header.Clone(), body}
		io.WriteString(w, `{"ok":true}`)
	})
	s := localSender(t, time.Second)

	for _, method := range []string{"", "POST", "PUT", "PATCH"} {
		req := request(srv.URL+"/hooks?x=1", oldSecret, newSecretValue)
		req.Method = method
		res := s.Send(context.Background(), req)
		if res.Outcome != OutcomeDelivered || res.StatusCode != 200 || res.Error != "" {
			t.Fatalf("%s: %+v", method, res)
		}
		if res.ResponseBody != `{"ok":true}` || res.Duration <= 0 {
			t.Errorf("%s: body %q, duration %v", method, res.ResponseBody, res.Duration)
		}
		r := <-got
		if want := cmpOr(method, "POST"); r.method != want {
			t.Errorf("method %q, want %q", r.method, want)
		}
		if ct, ua := r.header.Get("content-type"), r.header.Get("user-agent"); ct != "application/json" || ua != "parcela-webhooks/1" {
			t.Errorf("content-type %q, user-agent %q", ct, ua)
		}
		if !bytes.Equal(r.body, req.Body) || r.header.Get("webhook-id") != "msg_test" {
			t.Errorf("body %q, webhook-id %q", r.body, r.header.Get("webhook-id"))
		}
		// Receivers on either side of a secret rotation accept the delivery.
		for _, secret := range []string{oldSecret, newSecretValue} {
			if err := Verify(secret, r.header, r.body, time.Now(), DefaultTolerance); err != nil {
				t.Errorf("%s: Verify: %v", method, err)
			}
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestSendStatusOutcomes(t *testing.T) {
	httpDate := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		status     int
		retryAfter string
		outcome    Outcome
		minWait    time.Duration
		maxWait    time.Duration
	}{
		{"server error", 500, "", OutcomeRetry, 0, 0},
		{"not found", 404, "", OutcomeRetry, 0, 0},
		{"gone", 410, "", OutcomeGone, 0, 0},
		{"too many requests", 429, "7", OutcomeRetry, 7 * time.Second, 7 * time.Second},
		{"unavailable with date", 503, httpDate, OutcomeRetry, 25 * time.Second, 31 * time.Second},
		{"retry-after ignored on 500", 500, "7", OutcomeRetry, 0, 0},
		{"accepted", 202, "", OutcomeDelivered, 0, 0},
		{"no content", 204, "", OutcomeDelivered, 0, 0},
	}
	s := localSender(t, time.Second)
	secret := newSecret(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
			})
			res := s.Send(context.Background(), request(srv.URL, secret))
			if res.Outcome != tt.outcome || res.StatusCode != tt.status {
				t.Fatalf("%+v", res)
			}
			if res.RetryAfter < tt.minWait || res.RetryAfter > tt.maxWait {
				t.Errorf("RetryAfter %v, want in [%v, %v]", res.RetryAfter, tt.minWait, tt.maxWait)
			}
			if (tt.outcome == OutcomeDelivered) != (res.Error == "") {
				t.Errorf("Error %q for outcome %s", res.Error, res.Outcome)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-5":                            0,
		"soon":                          0,
		" 120 ":                         2 * time.Minute,
		"99999999999999999":             24 * time.Hour,
		"99999999999999999999":          24 * time.Hour, // past int64
		"18446744073709551616":          24 * time.Hour, // past uint64
		"-99999999999999999999":         0,
		"+5":                            0,
		"Sun, 01 Mar 2026 12:01:00 GMT": time.Minute,
		"Sun, 01 Mar 2026 11:00:00 GMT": 0,
		"Mon, 01 Mar 2027 12:00:00 GMT": 24 * time.Hour,
	}
	for v, want := range tests {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestSendTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release) // runs before srv.Close, so the handler is not left hanging

	res := localSender(t, 200*time.Millisecond).Send(context.Background(), request(srv.URL, newSecret(t)))
	if res.Outcome != OutcomeRetry || res.StatusCode != 0 || !strings.Contains(res.Error, "timed out") {
		t.Fatalf("%+v", res)
	}
	if res.Duration < 200*time.Millisecond || res.Duration > 2*time.Second {
		t.Errorf("Duration %v", res.Duration)
	}
}

func TestSendDoesNotFollowRedirects(t *testing.T) {
	var targetCalls atomic.Int32
	target := serve(t, func(w http.ResponseWriter, r *http.Request) { targetCalls.Add(1) })
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	})
	res := localSender(t, time.Second).Send(context.Background(), request(srv.URL, newSecret(t)))
	if res.Outcome != OutcomeRetry || res.StatusCode != 302 {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(res.Error, "not followed") || !strings.Contains(res.Error, "/elsewhere") {
		t.Errorf("Error %q", res.Error)
	}
	if n := targetCalls.Load(); n != 0 {
		t.Errorf("redirect target called %d times", n)
	}
}

func TestSendTruncatesResponseBody(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("a"), 10<<10))
	})
	res := localSender(t, time.Second).Send(context.Background(), request(srv.URL, newSecret(t)))
	if res.Outcome != OutcomeDelivered || len(res.ResponseBody) != 4096 {
		t.Fatalf("outcome %s, body %d bytes", res.Outcome, len(res.ResponseBody))
	}
}

func TestPrintable(t *testing.T) {
	// "é" is two bytes; put its first byte last within the limit.
	cut := append(bytes.Repeat([]byte("a"), maxResponseBody-1), "é"[0])
	if got := printable(cut); got != strings.Repeat("a", maxResponseBody-1) {
		t.Errorf("cut rune kept: %q", got[len(got)-4:])
	}
	if got := printable([]byte("a\x00b\xffc")); got != "a\uFFFDb\uFFFDc" {
		t.Errorf("printable = %q", got)
	}
	// Replacement characters are wider than the bytes they replace.
	if got := printable(bytes.Repeat([]byte{0}, maxResponseBody)); len(got) > maxResponseBody {
		t.Errorf("printable grew to %d bytes", len(got))
	}
}

func TestSendBlocksInternalAddresses(t *testing.T) {
	var calls atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	u, _ := url.Parse(srv.URL)
	strict := NewSender(nil, time.Second) // no allowed CIDRs

	for _, target := range []string{srv.URL, "http://localhost:" + u.Port() + "/"} {
		res := strict.Send(context.Background(), request(target, newSecret(t)))
		if res.Outcome != OutcomeBlocked || res.StatusCode != 0 {
			t.Errorf("%s: %+v", target, res)
		}
		// The log the company reads says why, and of a name never which
		// address it resolved to: internal names are the operator's.
		if !strings.Contains(res.Error, "loopback") || !strings.Contains(res.Error, "refused") {
			t.Errorf("%s: Error %q does not say why", target, res.Error)
		}
		if strings.Contains(target, "localhost") && (strings.Contains(res.Error, "127.0.0.1") || strings.Contains(res.Error, "::1")) {
			t.Errorf("%s: Error %q names the resolved address", target, res.Error)
		}
		if !strings.Contains(res.Detail, "127.0.0.1") && !strings.Contains(res.Detail, "::1") {
			t.Errorf("%s: Detail %q, for the operator, does not name the address", target, res.Detail)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("handler called %d times", n)
	}

	// The typed error survives net/http's wrapping (url.Error, net.OpError).
	req, _ := http.NewRequest("POST", srv.URL, nil)
	_, err := strict.client.Do(req)
	var blocked *BlockedAddressError
	if !errors.As(err, &blocked) || blocked.Addr.String() != "127.0.0.1" {
		t.Fatalf("errors.As through client.Do: %v", err)
	}
}

// The local host written as an address other than 127.0.0.1 is refused
// when the attempt dials it, not only when a URL is created: the
// unspecified addresses (0.0.0.0 and [::] connect to this host on Linux), an
// IPv4-mapped loopback and a URL with userinfo before it. A delivery of a
// URL stored before the create-time check, or retried after a policy
// change, meets only the dialer's. No name is used: nothing is looked up.
func TestSendBlocksLocalHostInEveryLiteral(t *testing.T) {
	var calls atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	u, _ := url.Parse(srv.URL)
	strict := NewSender(nil, time.Second)
	for _, host := range []string{"0.0.0.0", "[::]", "[::ffff:127.0.0.1]", "[::ffff:0.0.0.0]", "a@127.0.0.1", "127.0.0.1:" + u.Port() + "@127.0.0.2"} {
		target := "http://" + host + ":" + u.Port() + "/"
		res := strict.Send(context.Background(), request(target, newSecret(t)))
		if res.Outcome != OutcomeBlocked || res.StatusCode != 0 {
			t.Errorf("%s: %+v, want blocked", target, res)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("handler called %d times", n)
	}
}

func TestSendRejectsMalformedRequests(t *testing.T) {
	var calls atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	s := localSender(t, time.Second)
	secret := newSecret(t)

	tests := map[string]struct {
		req  Request
		want string
	}{
		"ftp scheme":  {request("ftp://127.0.0.1/x", secret), `scheme "ftp"`},
		"file scheme": {request("file:///etc/passwd", secret), `scheme "file"`},
		"no scheme":   {request("127.0.0.1/x", secret), "scheme"},
		"no host":     {request("http:///x", secret), "no host"},
		"bad url":     {request("http://[::1", secret), "invalid URL"},
		"no secrets":  {request(srv.URL), "no signing secret"},
		"bad secret":  {request(srv.URL, "whsec_***"), "signing secret"},
		"no msg id":   {Request{URL: srv.URL, Secrets: []string{secret}}, "no id"},
		"GET":         {func() Request { r := request(srv.URL, secret); r.Method = "GET"; return r }(), `method "GET"`},
	}
	for name, tt := range tests {
		res := s.Send(context.Background(), tt.req)
		if res.Outcome != OutcomeRetry || !strings.Contains(res.Error, tt.want) {
			t.Errorf("%s: %+v, want Error containing %q", name, res, tt.want)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("handler called %d times", n)
	}
}

func TestSendNeverPanics(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	secret := newSecret(t)

	//lint:ignore SA1012 a nil context is exactly what is being tested
	res := localSender(t, time.Second).Send(nil, request(srv.URL, secret))
	if res.Outcome != OutcomeDelivered {
		t.Errorf("nil context: %+v", res)
	}

	var nilSender *Sender
	if res := nilSender.Send(context.Background(), request(srv.URL, secret)); res.Outcome != OutcomeRetry || res.Error == "" {
		t.Errorf("nil sender: %+v", res)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := localSender(t, time.Second).Send(ctx, request(srv.URL, secret)); res.Outcome != OutcomeRetry || res.Error == "" {
		t.Errorf("canceled context: %+v", res)
	}
}

// A 2xx that comes after the attempt's time is a time-out, not a delivery.
func TestSendLateSuccessIsAFailure(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	defer close(release)
	res := localSender(t, 200*time.Millisecond).Send(context.Background(), request(srv.URL, newSecret(t)))
	if res.Outcome != OutcomeRetry || res.StatusCode != 0 || !strings.Contains(res.Error, "timed out") {
		t.Fatalf("%+v", res)
	}
}

// A 2xx whose body never ends is delivered: the answer came in time. The
// attempt reads only a bounded part of it and ends within its time limit.
func TestSendEndlessBodyIsBounded(t *testing.T) {
	var written atomic.Int64
	release := make(chan struct{})
	defer close(release)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
			select {
			case <-release:
				return
			default:
			}
		}
	})
	res := localSender(t, 2*time.Second).Send(context.Background(), request(srv.URL, newSecret(t)))
	if res.Outcome != OutcomeDelivered || res.StatusCode != 200 || len(res.ResponseBody) != maxResponseBody {
		t.Fatalf("outcome %s, status %d, body %d bytes", res.Outcome, res.StatusCode, len(res.ResponseBody))
	}
	// Whatever the sockets' buffers held, far less than the sender would
	// have read had it read on.
	if n := written.Load(); n > 64<<20 {
		t.Fatalf("the receiver wrote %d bytes before the sender hung up", n)
	}

	// A body that stalls after its first bytes ends the attempt at its
	// time limit, still delivered.
	stalled := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "ok")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	res = localSender(t, 300*time.Millisecond).Send(context.Background(), request(stalled.URL, newSecret(t)))
	if res.Outcome != OutcomeDelivered || res.ResponseBody != "ok" {
		t.Fatalf("stalled body: %+v", res)
	}
}

// A transport failure is recorded in words the company can act on, without
// the resolver, the address dialled or the URL (which may carry a token):
// "lookup x on 127.0.0.53:53: no such host" showed the company the
// operator's resolver, and "dial tcp 10.1.2.3:443" an internal address.
// Detail keeps the error for the operator's debug log.
func TestSendFailuresNameNoInternalAddress(t *testing.T) {
	s := NewSender(nil, time.Second)
	host := "hooks.example.com"
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://" + host + "/in?token=abc", Err: &net.OpError{Op: "dial", Net: "tcp",
			Addr: &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 443}, Err: err}}
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{dial(&net.DNSError{Err: "no such host", Name: host, Server: "127.0.0.53:53", IsNotFound: true}), "name not found"},
		{dial(&net.DNSError{Err: "i/o timeout", Name: host, Server: "127.0.0.53:53", IsTimeout: true}), "DNS lookup of " + host + " timed out"},
		{dial(&net.DNSError{Err: "server misbehaving", Name: host, Server: "127.0.0.53:53", IsTemporary: true}), "DNS lookup of " + host + " failed"},
		{dial(&os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}), "connection refused by " + host},
		{dial(&os.SyscallError{Syscall: "connect", Err: syscall.EHOSTUNREACH}), host + " is unreachable"},
		{&url.Error{Op: "Post", URL: "https://" + host + "/in?token=abc", Err: context.Canceled}, "canceled: parcela stopped"},
		{dial(&BlockedAddressError{Addr: netip.MustParseAddr("64:ff9b::a00:1"), Reason: "NAT64 of 10.0.0.1 (private)"}), "refused"},
		{dial(&BlockedAddressError{Addr: netip.MustParseAddr("10.1.2.3"), Reason: "private"}), "resolves to a private address"},
	} {
		res := s.failure(host, c.err)
		if !strings.Contains(res.Error, c.want) {
			t.Errorf("%v: Error %q, want %q", c.err, res.Error, c.want)
		}
		for _, leak := range []string{"127.0.0.53", ":53", "10.1.2.3", "10.0.0.1", "64:ff9b", "token=abc", "dial tcp"} {
			if strings.Contains(res.Error, leak) {
				t.Errorf("%v: Error %q holds %q", c.err, res.Error, leak)
			}
		}
		if res.Detail == "" || strings.Contains(res.Detail, "token=abc") {
			t.Errorf("%v: Detail %q", c.err, res.Detail)
		}
	}
}

// A TLS handshake that never ends times out with the attempt, at its time
// limit, as the error says: the transport's own 10 s cut it short, and
// the log said "did not answer within 15s" of an attempt that lasted 10 s
// (and refused a receiver whose handshake took 10 of its 15 s).
func TestSendStalledTLSHandshakeTimesOutWithTheAttempt(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		// Take the ClientHello and never answer it.
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, conn)
		}
	}()
	const limit = 11 * time.Second
	res := localSender(t, limit).Send(context.Background(), request("https://"+ln.Addr().String()+"/hooks", newSecret(t)))
	if res.Outcome != OutcomeRetry || res.StatusCode != 0 || res.Error != "timed out: "+ln.Addr().String()+" did not answer within 11s" {
		t.Fatalf("%+v", res)
	}
	if res.Duration < limit {
		t.Errorf("the attempt ended after %v, before its limit %v", res.Duration, limit)
	}
}

// An attempt cut short by a context canceled with a cause is parcela
// stopping, as one canceled without: the job queue's hard stop cancels its
// jobs with the cause "stop initiated", which net/http returns in place of
// context.Canceled, and the company's delivery log read "the request to
// HOST failed: stop initiated".
func TestSendCanceledWithACauseSaysParcelaStopped(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for the handler
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-arrived
		cancel(errors.New("stop initiated"))
	}()
	res := localSender(t, 10*time.Second).Send(ctx, request(srv.URL, newSecret(t)))
	if res.Outcome != OutcomeRetry || !strings.Contains(res.Error, "canceled: parcela stopped") || strings.Contains(res.Error, "stop initiated") {
		t.Errorf("attempt canceled with a cause: %+v", res)
	}
}

// Connecting to 0.0.0.0 or :: reaches this host on Linux, so an allowance
// as wide as 0.0.0.0/0 let a webhook at 0.0.0.0:port reach the process's
// own listener on 127.0.0.1:port, which RefuseOwn names by its address (an
// audit). The unspecified address is refused whatever the allowance, when
// the attempt dials it and when a URL is checked.
func TestUnspecifiedAddressRefusedWhateverTheAllowance(t *testing.T) {
	var calls atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	u, _ := url.Parse(srv.URL)
	own := netip.MustParseAddrPort(u.Host)
	p, err := NewAddressPolicy("0.0.0.0/0,::/0")
	if err != nil {
		t.Fatal(err)
	}
	p.RefuseOwn([]netip.AddrPort{own}, nil)
	for _, a := range []string{"0.0.0.0", "::", "::ffff:0.0.0.0"} {
		var blocked *BlockedAddressError
		if err := p.Check(netip.MustParseAddr(a)); !errors.As(err, &blocked) || blocked.Reason != "unspecified" {
			t.Errorf("Check(%s) = %v, want refused as unspecified", a, err)
		}
	}
	s := NewSender(p, time.Second)
	for _, host := range []string{"0.0.0.0", "[::ffff:0.0.0.0]"} {
		res := s.Send(context.Background(), request("http://"+host+":"+u.Port()+"/debug/pprof/goroutine", newSecret(t)))
		if res.Outcome != OutcomeBlocked || res.StatusCode != 0 || res.ResponseBody != "" {
			t.Errorf("%s: %+v, want blocked", host, res)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the own listener was called %d times", n)
	}
}
