package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// DefaultTimeout bounds one attempt, from dialling to the last byte read.
const DefaultTimeout = 15 * time.Second

const (
	// maxResponseBody is how much of the receiver's answer the delivery log keeps.
	maxResponseBody = 4 << 10
	// maxStatusText, maxLocationText and maxErrorText bound what of the
	// receiver's status line and Location header an attempt's error quotes,
	// and the error itself.
	maxStatusText   = 256
	maxLocationText = 1 << 10
	maxErrorText    = 2 << 10
	// maxDrain is how much more is read and discarded so the connection can
	// be reused; past it, closing is cheaper than reading on.
	maxDrain = 64 << 10
	// maxRetryAfter caps Retry-After, so a receiver cannot park a delivery
	// for years (or overflow a Duration).
	maxRetryAfter = 24 * time.Hour
)

// Request is one delivery attempt.
type Request struct {
	URL       string
	Method    string    // POST, PUT or PATCH; empty means POST
	MsgID     string    // webhook-id: the same on every attempt, receivers dedupe on it
	Timestamp time.Time // webhook-timestamp: fresh on every attempt; zero means now
	Body      []byte
	Secrets   []string // every current secret signs; two during a rotation
}

// Outcome is what the caller should do with the delivery next.
type Outcome string

const (
	OutcomeDelivered Outcome = "delivered" // 2xx
	OutcomeRetry     Outcome = "retry"     // any other failure: retry on schedule
	OutcomeGone      Outcome = "gone"      // 410: the receiver asks to disable the webhook
	OutcomeBlocked   Outcome = "blocked"   // the address policy refused; retried like a failure
)

// Result records one attempt for the delivery log.
type Result struct {
	Outcome      Outcome
	StatusCode   int // 0 if no response arrived
	Duration     time.Duration
	ResponseBody string // at most the first 4 KiB, as valid UTF-8
	Error        string // for the delivery log the company reads; empty on success
	// Detail is the transport error as Go reported it (the address dialled,
	// the resolver), for the operator's debug log only; never the URL.
	Detail     string
	RetryAfter time.Duration // from Retry-After on 429 and 503; 0 if none
}

// Sender delivers webhooks over HTTP. It is safe for concurrent use and
// should be shared, so connections to the same receiver are reused.
type Sender struct {
	client  *http.Client
	timeout time.Duration
}

// NewSender returns a sender that dials only addresses policy accepts (nil
// accepts no special-purpose address) and gives each attempt timeout
// (DefaultTimeout if not positive).
func NewSender(policy *AddressPolicy, timeout time.Duration) *Sender {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dialer := &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Control:   policy.Control,
	}
	transport := &http.Transport{
		// No proxy, not even from the environment: the proxy would make the
		// connection to the receiver, out of reach of the address check.
		Proxy:             nil,
		DialContext:       dialer.DialContext,
		ForceAttemptHTTP2: true,
		// The attempt's limit bounds the handshake too: a limit of its own
		// (net/http's usual 10 s) ended attempts early, recorded as "did
		// not answer within 15s", and refused a slow handshake the 15 s
		// the receiver is promised would have let through.
		TLSHandshakeTimeout: timeout,
		MaxIdleConns:        256,
		// As many as the attempts that may run at once to one receiver (a
		// company's burst is half of the 100 delivery workers): with fewer,
		// a busy receiver's extra connections were closed after each
		// attempt and dialled again (connect was 2% of delivering).
		MaxIdleConnsPerHost:    100,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &Sender{
		client: &http.Client{
			Transport: transport,
			Timeout:   timeout,
			// A redirect could point anywhere (the policy would still check
			// it, but the signed request was for this URL); the receiver must
			// configure its final URL.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		timeout: timeout,
	}
}

// Send makes one delivery attempt. It never panics: every problem, including
// a malformed Request, comes back as a Result the caller can log.
func (s *Sender) Send(ctx context.Context, r Request) (res Result) {
	start := time.Now()
	defer func() {
		// A bad row in the queue must become a logged failed attempt, not a
		// crashed worker.
		if p := recover(); p != nil {
			res = Result{Outcome: OutcomeRetry, Error: fmt.Sprintf("internal error: %v", p)}
		}
		// The log's text is stored: no answer of the receiver may make it
		// text a database refuses, or the attempt could not be recorded.
		if res.Error != "" {
			res.Error = printableText(res.Error, maxErrorText)
		}
		res.Duration = time.Since(start)
	}()
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := s.newRequest(ctx, r)
	if err != nil {
		return Result{Outcome: OutcomeRetry, Error: err.Error()}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() == context.Canceled && !errors.Is(err, context.Canceled) {
			// A context canceled with a cause fails the request with the
			// cause: the job queue's hard stop ("stop initiated") read as
			// the receiver's failure, in the company's delivery log.
			err = fmt.Errorf("%w: %w", context.Canceled, err)
		}
		return s.failure(req.URL.Host, err)
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// Its body is the connection itself, which neither the client's
		// timeout nor ctx bounds: read, it held the attempt (and its
		// worker, slot and company place) for as long as the receiver
		// kept the connection open.
		_ = resp.Body.Close()
		return Result{Outcome: OutcomeRetry, StatusCode: resp.StatusCode, Error: "receiver answered " + statusText(resp)}
	}
	body := readBody(resp.Body)
	res = Result{StatusCode: resp.StatusCode, ResponseBody: body}
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		res.Outcome = OutcomeDelivered
	case code == http.StatusGone:
		res.Outcome = OutcomeGone
		res.Error = "receiver answered 410 Gone: the webhook should be disabled"
	case code >= 300 && code <= 399:
		res.Outcome = OutcomeRetry
		res.Error = fmt.Sprintf("receiver answered %s redirecting to %s; redirects are not followed, configure the final URL",
			statusText(resp), quotedLocation(resp.Header.Get("Location")))
	default:
		res.Outcome = OutcomeRetry
		res.Error = "receiver answered " + statusText(resp)
		if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
			res.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
	}
	return res
}

// newRequest validates r and builds the signed HTTP request.
func (s *Sender) newRequest(ctx context.Context, r Request) (*http.Request, error) {
	method := strings.ToUpper(r.Method)
	switch method {
	case "":
		method = http.MethodPost
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return nil, fmt.Errorf("method %q is not POST, PUT or PATCH", r.Method)
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL scheme %q is not http or https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("URL has no host")
	}
	if r.MsgID == "" {
		return nil, errors.New("message has no id")
	}
	ts := r.Timestamp
	if ts.IsZero() {
		ts = time.Now()
	}
	sig, err := SignatureHeader(r.Secrets, r.MsgID, ts, r.Body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("user-agent", "parcela-webhooks/1")
	req.Header.Set("webhook-id", r.MsgID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	return req, nil
}

// failure turns a transport error into a Result whose Error says what the
// company can act on, naming only the URL's host: never the address a
// name resolved to (an internal one is the operator's), the resolver, or
// the URL (its query may hold a token).
func (s *Sender) failure(host string, err error) Result {
	inner := err
	if u, ok := errors.AsType[*url.Error](err); ok {
		inner = u.Err
	}
	res := Result{Outcome: OutcomeRetry, Detail: inner.Error()}
	var netErr net.Error
	if blocked, ok := errors.AsType[*BlockedAddressError](err); ok {
		res.Outcome = OutcomeBlocked
		res.Error = fmt.Sprintf("refused to connect to %s: it resolves to %s, where webhooks may not be delivered", host, publicReason(blocked.Reason))
	} else if dns, ok := errors.AsType[*net.DNSError](err); ok {
		switch {
		case dns.IsNotFound:
			res.Error = fmt.Sprintf("name not found: %s has no address in DNS", host)
		case dns.IsTimeout:
			res.Error = fmt.Sprintf("DNS lookup of %s timed out", host)
		default:
			res.Error = fmt.Sprintf("DNS lookup of %s failed", host)
		}
	} else if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		res.Error = fmt.Sprintf("timed out: %s did not answer within %s", host, s.timeout)
	} else if errors.Is(err, context.Canceled) {
		// The worker's context: parcela stopping mid-attempt.
		res.Error = fmt.Sprintf("canceled: parcela stopped while waiting for %s's answer; the delivery is retried", host)
	} else if errors.Is(err, syscall.ECONNREFUSED) {
		res.Error = "connection refused by " + host
	} else if errors.Is(err, syscall.ECONNRESET) {
		res.Error = "connection reset by " + host
	} else if errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		res.Error = host + " is unreachable"
	} else if cert, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		res.Error = fmt.Sprintf("the TLS certificate of %s is not valid: %v", host, cert.Err)
	} else if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		res.Error = host + " closed the connection without answering"
	} else if op, ok := errors.AsType[*net.OpError](err); ok {
		// Its own text names the addresses; its cause does not.
		res.Error = fmt.Sprintf("could not reach %s: %v", host, op.Err)
	} else {
		res.Error = fmt.Sprintf("the request to %s failed: %v", host, inner)
	}
	return res
}

// publicReason is a BlockedAddressError's reason without the IPv4 address
// a NAT64 or 6to4 address embeds ("NAT64 of 10.0.0.1 (private)").
func publicReason(reason string) string {
	for _, kind := range []string{"NAT64", "6to4"} {
		if rest, ok := strings.CutPrefix(reason, kind+" of "); ok {
			if _, why, ok := strings.Cut(rest, " ("); ok {
				return "a " + kind + " address of a " + strings.TrimSuffix(why, ")") + " IPv4 address"
			}
			return "a " + kind + " address of a refused IPv4 address"
		}
	}
	switch reason {
	case "private", "loopback", "link-local", "multicast", "broadcast", "reserved", "unspecified", "unique-local (private)":
		return "a " + reason + " address"
	}
	return "an address that is " + reason
}

// readBody keeps the start of the response for the log, drains a bounded
// amount more so the connection can go back to the pool, and closes.
func readBody(body io.ReadCloser) string {
	defer body.Close()
	b, _ := io.ReadAll(io.LimitReader(body, maxResponseBody))
	_, _ = io.CopyN(io.Discard, body, maxDrain)
	return printable(b)
}

// statusText is the receiver's status line after its version ("503
// Serviço Indisponível"), which the receiver writes: in any bytes (a
// Latin-1 reason phrase is common), and as long as its header limit.
func statusText(resp *http.Response) string {
	return printableText(resp.Status, maxStatusText)
}

// quotedLocation is the receiver's Location quoted as Go quotes a string,
// at most maxLocationText bytes quoted: a character quoting escapes (a
// no-break space is six bytes as \u00a0) is never cut in half, and the
// quote is closed.
func quotedLocation(loc string) string {
	q := []byte{'"'}
	for _, r := range printableText(loc, maxLocationText) {
		c := strconv.Quote(string(r))
		c = c[1 : len(c)-1]
		if len(q)+len(c)+1 > maxLocationText {
			break
		}
		q = append(q, c...)
	}
	return string(append(q, '"'))
}

// printableText is s as printable makes text of a body, cut to at most max
// bytes on a character's boundary.
func printableText(s string, max int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	if len(s) <= max {
		return s
	}
	// Valid UTF-8 now: back off from max to the start of a character.
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// printable makes b safe to store as text: valid UTF-8 (a database text
// column rejects anything else), no NUL bytes, and still at most
// maxResponseBody bytes after replacement characters.
func printable(b []byte) string {
	if len(b) == maxResponseBody {
		// The limit may have cut a character in half; drop the fragment
		// rather than show it as a replacement character.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return printableText(string(b), maxResponseBody)
}

// retryAfter reads a Retry-After value, delay-seconds or HTTP-date, as a
// wait from now; 0 if absent, malformed or already past. Seconds past what
// an integer holds are the longest wait, as any count past it is: read as
// malformed, they let the retry come on the schedule's seconds.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if err != nil || secs > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}
