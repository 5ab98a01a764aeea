// Package client is a Go client of parcela's external API.
//
// The types and one method per operation (client.gen.go) are generated from
// the API's OpenAPI document, api/openapi.yaml, with oapi-codegen (go
// generate ./client). This file and its neighbours add what every
// integration needs on top:
//
//   - New takes the listener's address and a token, and authenticates every
//     request;
//   - every POST, PATCH and DELETE carries an Idempotency-Key (a fresh one
//     unless the caller sets its own; one with a control character other
//     than a tab, which no header carries, is an
//     error before any attempt), so it can be retried without doing
//     its work twice or answering a lost first answer differently;
//   - answers 409 idempotency_in_flight and conflict, 429 and 5xx, lost connections
//     (not a certificate the client refuses) and a 2xx whose body was cut
//     short, are retried a bounded number of times, honouring Retry-After and the
//     request's context (a retry its deadline would not leave time for is
//     not waited for: the answer is returned at once);
//   - an error answer becomes an error of type *Problem (errors.As), and a
//     2xx that is not one of the API's (a proxy's HTML page) an error too,
//     so the *WithResponse methods return either a response with its 2xx
//     body (JSON200, JSON201) or an error;
//   - a redirect is an error, not followed (the API answers none): the
//     token and a POST's body go to the listener's address only;
//   - the error of a POST, PATCH or DELETE that failed without knowing
//     whether it was done (an attempt lost its connection or its answer's
//     body, or found the first still running: 409 idempotency_in_flight)
//     carries its Idempotency-Key (IdempotencyKeyOf), whatever the last
//     attempt answered: sent again with that key it is done at most once;
//   - Bills walks every page of a bill listing;
//   - VerifyWebhook checks a notification's Standard Webhooks signature.
//
// Rates are json.Number so that 0.0299 stays exactly 0.0299; amounts are
// int64 cents.
// The PATCH fields whose null removes a value (an offer's expires_at and
// seats, a product's start_date, end_date and banner_url) are
// nullable.Nullable: nullable.NewNullNullable sends null, the zero value
// leaves the field out.
package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one listener (production or sandbox) with one token. Its
// methods are the generated ones of ClientWithResponses. A Client is safe
// for concurrent use.
type Client struct {
	*ClientWithResponses
}

// Option configures New.
type Option func(*transport)

// WithHTTP sends the requests through c instead of a client with a
// 30-second timeout.
func WithHTTP(c *http.Client) Option { return func(t *transport) { t.http = c } }

// WithMaxAttempts bounds how many times one call is sent, retries included
// (default 4; 1 disables retries).
func WithMaxAttempts(n int) Option { return func(t *transport) { t.maxAttempts = max(n, 1) } }

// WithMaxRetryWait is the longest wait before a retry (default 30 s): the
// backoff doubles up to it, and an answer whose Retry-After asks for more
// is returned to the caller instead.
func WithMaxRetryWait(d time.Duration) Option { return func(t *transport) { t.maxWait = d } }

// WithUserAgent sets the User-Agent of every request.
func WithUserAgent(ua string) Option { return func(t *transport) { t.userAgent = ua } }

// New returns a client of the listener at baseURL (for example
// http://127.0.0.1:8081 for a local sandbox) that authenticates with token.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: %q is not an http(s) address", baseURL)
	}
	if token == "" {
		return nil, errors.New("client: a token is required")
	}
	// Refused here rather than at each request, where net/http refuses the
	// header and the client retried that as a lost connection. The token
	// itself stays out of the message, which ends up in logs.
	if strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
		return nil, errors.New("client: the token has a space, a control character or a non-ASCII one (a newline read with it from a file?)")
	}
	t := &transport{
		http:        &http.Client{Timeout: 30 * time.Second},
		token:       token,
		userAgent:   "parcela-go-client",
		maxAttempts: 4,
		maxWait:     30 * time.Second,
		backoff:     200 * time.Millisecond,
	}
	for _, o := range opts {
		o(t)
	}
	// No redirect is followed: the API answers none (a path it would clean
	// is its 404), so a 3xx is a proxy's, and following it sent the token
	// and a POST's body wherever it pointed on the same host name (net/http
	// keeps Authorization for another port, or plain http, there). A copy,
	// so a client given WithHTTP is left as its caller set it.
	hc := *t.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	t.http = &hc
	if strings.ContainsFunc(t.userAgent, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("client: the user agent %q has a control character", t.userAgent)
	}
	c, err := NewClientWithResponses(baseURL, WithHTTPClient(t))
	if err != nil {
		return nil, err
	}
	return &Client{ClientWithResponses: c}, nil
}

// Ptr returns a pointer to v, for the optional fields of requests:
// client.Ptr(client.FinancedTypeBolepix), client.Ptr(json.Number("0.0299")).
func Ptr[T any](v T) *T { return &v }
