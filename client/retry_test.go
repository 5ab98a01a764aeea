package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"parcela/client"
)

// flaky is a server that answers each request with the next of its
// answers (the last one repeats), recording what it received. It stands for
// a parcela listener under load, which the real one cannot be made to be on
// demand.
type flaky struct {
	mu       sync.Mutex
	answers  []func(w http.ResponseWriter)
	received []*http.Request
	bodies   []string
}

func problem(status int, code string, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"type": "https://api.parcela.test/docs/errors#%s", "title": "t", "status": %d, "detail": "d", "code": %q, "request_id": "req_1"}`, code, status, code)
	}
}

func ok(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"results": [], "total_items": 0, "total_pages": 0}`)
}

func created(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprint(w, `{"id": "1929b262-8d21-4c03-8f10-dc12d94e2fbe", "name": "Curso"}`)
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func newFlaky(t *testing.T, answers ...func(w http.ResponseWriter)) (*flaky, *client.Client) {
	t.Helper()
	return newFlakyWith(t, nil, answers...)
}

func newFlakyWith(t *testing.T, opts []client.Option, answers ...func(w http.ResponseWriter)) (*flaky, *client.Client) {
	t.Helper()
	f := &flaky{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.received)
		f.received = append(f.received, r.Clone(context.Background()))
		f.bodies = append(f.bodies, string(body))
		f.mu.Unlock()
		f.answers[min(n, len(f.answers)-1)](w)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "sandbox_token", append([]client.Option{client.WithMaxRetryWait(2 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func (f *flaky) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.received)
}

func createProduct(c *client.Client) error {
	_, err := c.CreateProductWithResponse(context.Background(), nil, client.ProductCreateRequest{Product: client.ProductCreateInput{Name: "Curso", FullAmountCents: 50000}})
	return err
}

// A POST is retried with the same Idempotency-Key and body, after the
// wait Retry-After asks for.
func TestRetriesKeepTheKeyAndHonourRetryAfter(t *testing.T) {
	t.Parallel()
	f, c := newFlaky(t, problem(429, "rate_limited", "Retry-After", "1"), problem(409, "idempotency_in_flight"), problem(409, "conflict"), created)
	began := time.Now()
	if err := createProduct(c); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(began); elapsed < time.Second {
		t.Errorf("retried after %v, before Retry-After's second", elapsed)
	}
	if f.count() != 4 {
		t.Fatalf("%d attempts, want 4", f.count())
	}
	key := f.received[0].Header.Get("Idempotency-Key")
	for i, r := range f.received {
		if r.Header.Get("Idempotency-Key") != key || len(key) != 32 || f.bodies[i] != f.bodies[0] || f.bodies[i] == "" {
			t.Errorf("attempt %d: key %q body %q, first key %q body %q", i+1, r.Header.Get("Idempotency-Key"), f.bodies[i], key, f.bodies[0])
		}
		if r.Header.Get("Authorization") != "Bearer sandbox_token" {
			t.Errorf("attempt %d: Authorization %q", i+1, r.Header.Get("Authorization"))
		}
	}
	// Every new call gets a new key; GETs get none.
	if err := createProduct(c); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListBillsWithResponse(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if f.received[4].Header.Get("Idempotency-Key") == key || f.received[5].Header.Get("Idempotency-Key") != "" {
		t.Errorf("keys %q then %q", f.received[4].Header.Get("Idempotency-Key"), f.received[5].Header.Get("Idempotency-Key"))
	}
}

func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	f, c := newFlaky(t, problem(503, "unavailable"))
	_, err := c.ListBillsWithResponse(context.Background(), nil)
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != 503 || p.Code != "unavailable" {
		t.Fatalf("err = %v", err)
	}
	if f.count() != 4 {
		t.Errorf("%d attempts, want the default 4", f.count())
	}
}

func TestWhatIsNotRetried(t *testing.T) {
	t.Parallel()
	for name, answer := range map[string]func(http.ResponseWriter){
		"invalid_state":    problem(409, "invalid_state"),
		"validation":       problem(422, "validation_failed"),
		"not found":        problem(404, "not_found"),
		"a long wait":      problem(429, "rate_limited", "Retry-After", "60"),
		"an absurd wait":   problem(429, "rate_limited", "Retry-After", "9223372037"),
		"not implemented":  problem(501, "internal_error"),
		"one attempt only": problem(503, "unavailable"),
	} {
		var opts []client.Option
		if name == "one attempt only" {
			opts = append(opts, client.WithMaxAttempts(1))
		}
		f, c := newFlakyWith(t, opts, answer, created)
		if err := createProduct(c); err == nil || f.count() != 1 {
			t.Errorf("%s: err %v after %d attempts, want the problem after 1", name, err, f.count())
		}
	}
}

// A DELETE or a PATCH whose answer was lost is retried with the key of its
// first attempt, which the server answers with that attempt's answer,
// where they were sent without one and a deleted webhook's retry answered
// 404 for a DELETE that had worked.
func TestDeleteAndPatchCarryAKey(t *testing.T) {
	t.Parallel()
	noContent := func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }
	f, c := newFlaky(t, hangUp, noContent)
	ctx := context.Background()
	const id = "1929b262-8d21-4c03-8f10-dc12d94e2fbe"
	if gone, err := c.DeleteWebhookWithResponse(ctx, id, nil); err != nil || gone.StatusCode() != http.StatusNoContent {
		t.Fatalf("delete: %v", err)
	}
	if f.count() != 2 {
		t.Fatalf("%d attempts, want 2", f.count())
	}
	key := f.received[0].Header.Get("Idempotency-Key")
	if key == "" || f.received[1].Header.Get("Idempotency-Key") != key {
		t.Fatalf("DELETE keys %q then %q", key, f.received[1].Header.Get("Idempotency-Key"))
	}
	name := "ERP"
	// The flaky server's 204 is no webhook: only the key sent is checked.
	_, _ = c.UpdateWebhookWithResponse(ctx, id, nil, client.UpdateWebhookJSONRequestBody{Name: &name})
	if k := f.received[2].Header.Get("Idempotency-Key"); k == "" || k == key {
		t.Fatalf("PATCH key %q (the DELETE's %q)", k, key)
	}
}

func TestRetriesLostConnections(t *testing.T) {
	t.Parallel()
	f, c := newFlaky(t, hangUp, ok)
	if _, err := c.ListBillsWithResponse(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if f.count() != 2 {
		t.Errorf("%d attempts, want 2", f.count())
	}
}

// A canceled context stops the waiting at once.
func TestRetryWaitFollowsTheContext(t *testing.T) {
	t.Parallel()
	_, c := newFlaky(t, problem(429, "rate_limited", "Retry-After", "2"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	began := time.Now()
	_, err := c.ListBillsWithResponse(ctx, nil)
	// Canceled at 100 ms, where the wait is 2 s: the margin is for a
	// loaded machine, not a measure.
	if !errors.Is(err, context.Canceled) || time.Since(began) > 1500*time.Millisecond {
		t.Errorf("err %v after %v", err, time.Since(began))
	}
}

// An answer that is not a problem document (a proxy's page) is still a
// *Problem, with its status.
func TestNonProblemAnswers(t *testing.T) {
	t.Parallel()
	_, c := newFlaky(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "<html>blocked by the firewall</html>")
	})
	_, err := c.ListBillsWithResponse(context.Background(), nil)
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != 403 || p.Code != "" || p.Title != "Forbidden" || p.Detail != "<html>blocked by the firewall</html>" {
		t.Errorf("err = %#v", err)
	}
}

func TestNewRefusesBadArguments(t *testing.T) {
	t.Parallel()
	// A token with a newline (read from a file) or a space cannot be sent:
	// it is refused at once, not retried as a lost connection at each call.
	for _, args := range [][2]string{{"127.0.0.1:8081", "t"}, {"ftp://h", "t"}, {"http://127.0.0.1:8081", ""},
		{"http://127.0.0.1:8081", "sandbox_token\n"}, {"http://127.0.0.1:8081", "sandbox token"}} {
		if _, err := client.New(args[0], args[1]); err == nil {
			t.Errorf("New(%q, %q) accepted", args[0], args[1])
		}
	}
	if _, err := client.New("http://127.0.0.1:8081", "t", client.WithUserAgent("my-shop/1.0\r\n")); err == nil {
		t.Error("a user agent with a newline accepted")
	}
}

// A 2xx that is not one of the API's answers (a proxy's or a captive
// portal's page) is an error, never a response without its body.
func TestSuccessThatIsNotTheAPIs(t *testing.T) {
	t.Parallel()
	_, c := newFlaky(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html>Sign in to the hotel's Wi-Fi</html>")
	})
	resp, err := c.CreateProductWithResponse(context.Background(), nil, client.ProductCreateRequest{Product: client.ProductCreateInput{Name: "Curso", FullAmountCents: 50000}})
	if err == nil {
		t.Fatalf("no error; JSON201 %v", resp.JSON201)
	}
	if !strings.Contains(err.Error(), "200") || !strings.Contains(err.Error(), "text/html") || !strings.Contains(err.Error(), "Wi-Fi") {
		t.Errorf("err = %v, want the status, the content type and the start of the body", err)
	}
	if _, err := c.ListBillsWithResponse(context.Background(), nil); err == nil {
		t.Error("a listing: no error")
	}
}

// The start of a long answer that is not a problem document is cut on a
// character, not inside one.
func TestNonProblemAnswerCutOnACharacter(t *testing.T) {
	t.Parallel()
	page := "<p>" + strings.Repeat("Não há conexão com a aplicação.  ", 10) + "</p>"
	_, c := newFlakyWith(t, []client.Option{client.WithMaxAttempts(1)}, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, page)
	})
	_, err := c.ListBillsWithResponse(context.Background(), nil)
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != 502 || !utf8.ValidString(p.Detail) || !strings.HasPrefix(page, strings.TrimSuffix(p.Detail, "…")) || len(p.Detail) > 210 {
		t.Errorf("err = %q", err)
	}
}

// A Retry-After that is neither seconds nor a date (or is negative) is
// ignored: the retries back off as without one, not at once.
func TestUnreadableRetryAfterBacksOff(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"soon", "-5", "1.5"} {
		f, c := newFlaky(t, problem(503, "unavailable", "Retry-After", v), problem(503, "unavailable", "Retry-After", v), problem(503, "unavailable", "Retry-After", v), ok)
		began := time.Now()
		if _, err := c.ListBillsWithResponse(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		// Three waits of at least 100, 200 and 400 ms.
		if elapsed := time.Since(began); f.count() != 4 || elapsed < 700*time.Millisecond {
			t.Errorf("Retry-After %q: %d attempts in %v", v, f.count(), elapsed)
		}
	}
}

// A retry that the context's deadline would cut short is not waited for:
// the answer is returned at once, where the caller can read its Retry-After.
func TestRetryPastTheDeadlineIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	f, c := newFlaky(t, problem(429, "rate_limited", "Retry-After", "2"), ok)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := c.ListBillsWithResponse(ctx, nil)
	var p *client.Problem
	// A wait would last until the deadline (1.5 s) and end in its error:
	// under that, with the margin a loaded machine needs.
	if !errors.As(err, &p) || p.Status != 429 || time.Since(began) > 1200*time.Millisecond || f.count() != 1 {
		t.Errorf("err %v after %v and %d attempts, want the 429 at once", err, time.Since(began), f.count())
	}
}

// A 2xx whose JSON is cut or malformed is an error that names the call and
// the status, not only the decoder's complaint.
func TestSuccessWithMalformedJSON(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"id": "1929b262`, ``, `<html>`} {
		_, c := newFlaky(t, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, body)
		})
		err := createProduct(c)
		if err == nil || !strings.Contains(err.Error(), "POST /external_api/v1/products") || !strings.Contains(err.Error(), "201") {
			t.Errorf("%q: err = %v", body, err)
		}
	}
}

// A certificate the client does not trust is not a lost connection: it is
// returned at once, not tried again.
func TestUntrustedCertificateIsNotRetried(t *testing.T) {
	t.Parallel()
	var attempts atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ok(w) }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			attempts.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes the client breaks off
	srv.StartTLS()
	defer srv.Close()
	c, err := client.New(srv.URL, "sandbox_token")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListBillsWithResponse(context.Background(), nil)
	var cert *tls.CertificateVerificationError
	if !errors.As(err, &cert) || attempts.Load() != 1 {
		t.Errorf("err %v after %d attempts", err, attempts.Load())
	}
}

// A caller's Idempotency-Key that no HTTP header carries (a newline read
// with it from a file) is refused before any attempt: net/http refuses it
// at every one, and the client retried that as a lost connection, four
// attempts and a second of backoff for an error no retry could mend.
func TestCallersKeyWithANewlineIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { attempts.Add(1) }))
	t.Cleanup(srv.Close)
	sent := &countingTransport{}
	c, err := client.New(srv.URL, "sandbox_token", client.WithHTTP(&http.Client{Transport: sent}))
	if err != nil {
		t.Fatal(err)
	}
	key := client.IdempotencyKey("order-42\n")
	_, err = c.CreateProductWithResponse(context.Background(), &client.CreateProductParams{IdempotencyKey: &key},
		client.ProductCreateRequest{Product: client.ProductCreateInput{Name: "Curso", FullAmountCents: 50000}})
	if err == nil || !strings.Contains(err.Error(), "Idempotency-Key") {
		t.Fatalf("a key with a newline: %v", err)
	}
	if n := sent.n.Load(); n != 0 || attempts.Load() != 0 {
		t.Fatalf("%d attempts sent, %d reached the server", n, attempts.Load())
	}
}

// countingTransport counts the requests it sends.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}
