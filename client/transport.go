package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// transport sends the generated client's requests: it authenticates them,
// gives every POST, PATCH and DELETE an Idempotency-Key, retries what is
// safe to retry, and
// turns error answers into *Problem errors.
type transport struct {
	http        *http.Client
	token       string
	userAgent   string
	maxAttempts int
	maxWait     time.Duration
	backoff     time.Duration // the first retry's wait without Retry-After; doubled each time
}

// maxProblemBytes bounds how much of an error answer is read.
const maxProblemBytes = 1 << 20

// Do sends req, retrying as the package documentation says.
//
// Retrying is safe: a POST, PATCH or DELETE carries the same
// Idempotency-Key on every attempt, so the server runs it once (a 5xx is
// not stored, so its retry runs for real) and answers a retry with the
// first answer: a DELETE whose 204 was lost is 204 again, not 404. A GET
// changes nothing.
//
// The error of a request with a key whose outcome is unknown carries the
// key (IdempotencyKeyOf): once any attempt may have reached the server
// without its answer reaching the caller (a lost connection, a 2xx cut
// short or not the API's, a 409 idempotency_in_flight), the caller does
// not know whether it was done, whatever the last attempt answered, and
// resumes it by sending it again with that key (an audit: the key was the
// client's alone, and a call again made a second charge or rotation; a
// review: a 429 after a cut 2xx hid it). It wraps the error, as a
// net.Error only where that was one (a timeout stays one to
// os.IsTimeout; a problem answer does not become one). A request none of
// whose attempts may have been done (a *Problem answered to each, or an
// error before any was sent) carries no key: the work was not done, or
// its answer is the one stored.
func (t *transport) Do(req *http.Request) (*http.Response, error) {
	var unknown bool // some attempt may have been done, its answer not had
	resp, err := t.do(req, &unknown)
	if key := req.Header.Get("Idempotency-Key"); err != nil && key != "" && unknown {
		k := &keyedError{key: key, err: err}
		var ne net.Error
		if errors.As(err, &ne) {
			err = &keyedNetError{k}
		} else {
			err = k
		}
	}
	return resp, err
}

// keyedError is the error of a request sent with an Idempotency-Key whose
// outcome is unknown.
type keyedError struct {
	key string
	err error
}

func (e *keyedError) Error() string { return e.err.Error() }
func (e *keyedError) Unwrap() error { return e.err }

// keyedNetError is a keyedError of a net.Error: Timeout and Temporary
// answer as the wrapped one does, so that err.(net.Error) and
// os.IsTimeout(err), which do not unwrap, still see a timeout.
type keyedNetError struct{ *keyedError }

func (e *keyedNetError) Unwrap() error { return e.keyedError }

func (e *keyedNetError) Timeout() bool {
	var ne net.Error
	return errors.As(e.err, &ne) && ne.Timeout()
}

func (e *keyedNetError) Temporary() bool {
	var ne interface{ Temporary() bool }
	return errors.As(e.err, &ne) && ne.Temporary()
}

// IdempotencyKeyOf is the Idempotency-Key of a POST, PATCH or DELETE that
// failed without knowing whether it was done (an attempt lost its
// connection or its answer, or found the first still running: 409
// idempotency_in_flight), the client's own or the caller's, whatever the
// last attempt answered; "" for any other error (a GET, an error before
// anything was sent, or problem answers only, after which the call was
// not done or its stored answer came back). Send the
// call again with this key (a request editor setting the Idempotency-Key
// header), and the server runs it at most once, or answers what it
// answered.
func IdempotencyKeyOf(err error) string {
	var k *keyedError
	if errors.As(err, &k) {
		return k.key
	}
	return ""
}

// do is Do without the key on its error; it sets *unknown once an
// attempt may have been done without its answer.
func (t *transport) do(req *http.Request, unknown *bool) (*http.Response, error) {
	req.Header.Set("Authorization", "Bearer "+t.token)
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", t.userAgent)
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead && req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", newIdempotencyKey())
	}
	if strings.ContainsFunc(req.Header.Get("Idempotency-Key"), func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		// net/http refuses such a header at every attempt, which read as
		// a lost connection and was retried with backoff.
		return nil, errors.New("client: the Idempotency-Key has a control character (a newline read with it from a file?)")
	}
	if err := replayable(req); err != nil {
		return nil, err
	}
	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req.Body = body
		}
		resp, err := t.http.Do(req)
		var wait time.Duration
		var failed error // what the caller gets if there is no retry
		switch {
		case err != nil:
			*unknown = *unknown || !untrusted(err)
			if ctx.Err() != nil || attempt >= t.maxAttempts || untrusted(err) {
				return nil, err
			}
			wait, failed = t.delay(attempt), err
		case resp.StatusCode < 400:
			err := notTheAPIs(req, resp)
			if err == nil {
				return resp, nil
			}
			*unknown = true
			// The answer's body was lost on the way (the connection dropped
			// mid-body): the request was done, and its retry, with the same
			// Idempotency-Key, is answered with the stored answer.
			var lost *lostBodyError
			if !errors.As(err, &lost) || ctx.Err() != nil || attempt >= t.maxAttempts {
				return nil, err
			}
			wait, failed = t.delay(attempt), err
		default:
			p := readProblem(resp)
			*unknown = *unknown || p.Code == "idempotency_in_flight"
			if attempt >= t.maxAttempts || !retryable(p) {
				return nil, p
			}
			wait = t.delay(attempt)
			if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				wait = d
			}
			if wait > t.maxWait {
				return nil, p
			}
			failed = p
		}
		// A retry the deadline would cut short is not waited for: the
		// caller gets the answer (and its Retry-After) now, not the
		// deadline's error later.
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= wait {
			return nil, failed
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// untrusted tells a server certificate the client refused: every retry
// would be refused the same way.
func untrusted(err error) bool {
	var cert *tls.CertificateVerificationError
	return errors.As(err, &cert)
}

// replayable makes sure the body can be sent again.
func replayable(req *http.Request) error {
	if req.Body == nil || req.GetBody != nil {
		return nil
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return err
	}
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.Body, _ = req.GetBody()
	return nil
}

// retryable tells the answers that a later attempt may turn into a success.
func retryable(p *Problem) bool {
	switch {
	case p.Status == http.StatusConflict:
		// conflict: concurrent requests won every round, and nothing was
		// done (the server stores no answer, so the retry runs).
		return p.Code == "idempotency_in_flight" || p.Code == "conflict"
	case p.Status == http.StatusTooManyRequests:
		return true
	case p.Status >= 500:
		return p.Status != http.StatusNotImplemented
	}
	return false
}

// delay is the wait before attempt+1 when the server gave no Retry-After:
// exponential, with jitter so that many clients do not retry in step, and
// at most the longest wait (doubling past it would overflow, and a lost
// connection's retry would sleep for hours).
func (t *transport) delay(attempt int) time.Duration {
	d := max(t.backoff, 1)
	for i := 1; i < attempt && d < t.maxWait && d <= math.MaxInt64/2; i++ {
		d *= 2
	}
	d = min(d, max(t.maxWait, 0))
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads Retry-After as seconds or as an HTTP date; ok is false
// when there is none or it is neither (negative seconds, "soon"), and the
// retry then backs off as without one rather than coming at once.
func retryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	if s, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		// Seconds past a Duration's range (about 292 years) are the longest
		// wait, not an overflow into a negative one that retries at once.
		if err != nil || s > uint64(math.MaxInt64/time.Second) {
			return math.MaxInt64, true
		}
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// readProblem reads an error answer. An answer that is not a problem
// document (a proxy's HTML page) still becomes a *Problem, with the
// status and the start of the body as its detail.
func readProblem(resp *http.Response) *Problem {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxProblemBytes))
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var p Problem
	if mt == "application/problem+json" && json.Unmarshal(body, &p) == nil && p.Code != "" {
		p.Status = resp.StatusCode
		return &p
	}
	detail := strings.TrimSpace(string(body))
	if len(detail) > 200 {
		// Cut on a character: half of a "ç" would make the message invalid
		// UTF-8, which a JSON log or a terminal turns into garbage.
		cut := 200
		for cut > 0 && !utf8.RuneStart(detail[cut]) {
			cut--
		}
		detail = detail[:cut] + "…"
	}
	return &Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode), Detail: detail, RequestId: resp.Header.Get("X-Request-Id")}
}

// notTheAPIs tells a 2xx that no operation of the API answers, and any
// redirect (the API answers none; 304 is an image's): a 2xx whose
// Content-Type is not JSON, a payment image or the OpenAPI document (a
// proxy's or a captive portal's page), which the generated methods would
// return with every JSONnnn field nil and no error, or whose JSON is not.
func notTheAPIs(req *http.Request, resp *http.Response) error {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified {
		resp.Body.Close()
		return fmt.Errorf("client: %s %s answered %d redirecting to %q, which the API never does (a proxy's answer?); the redirect was not followed",
			req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	switch mt {
	case "application/json":
		// Checked here, where the call and the status are known: the
		// generated method's error would be the decoder's alone
		// ("unexpected end of JSON input").
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			err = &lostBodyError{err}
		}
		if err == nil && !json.Valid(body) {
			err = errors.New("the body is not JSON (cut short?)")
		}
		if err != nil {
			return fmt.Errorf("client: %s %s answered %d: %w", req.Method, req.URL.Path, resp.StatusCode, err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	case "image/png", "application/yaml":
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	return fmt.Errorf("client: %s %s answered %d with Content-Type %q, which is not one of the API's answers: %s",
		req.Method, req.URL.Path, resp.StatusCode, ct, strings.TrimSpace(strings.ToValidUTF8(string(body), "")))
}

func newIdempotencyKey() string {
	var b [16]byte
	crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// lostBodyError is a 2xx answer whose body could not be read to its end.
type lostBodyError struct{ err error }

func (e *lostBodyError) Error() string { return e.err.Error() }
func (e *lostBodyError) Unwrap() error { return e.err }
