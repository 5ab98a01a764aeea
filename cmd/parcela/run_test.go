package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
	"parcela/web/browsertest"
)

func TestMain(m *testing.M) { sqldbtest.Main(m, browsertest.Stop) }

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type testServer struct {
	prod, sandbox, ops string
	dsn                string
	stdout, stderr     *syncBuffer
	// stop cancels run's context and waits for a clean exit (once).
	stop func()
}

// env builds a getenv from a map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// startServer runs `parcela serve` on port 0 for every listener, waits for
// /healthz, and stops it (checking a clean exit) when the test ends.
func startServer(t *testing.T, dsn string, extra map[string]string, args ...string) *testServer {
	t.Helper()
	vars := map[string]string{
		"PARCELA_DATABASE_URL":          dsn,
		"PARCELA_ADDR":                  "127.0.0.1:0",
		"PARCELA_SANDBOX_ADDR":          "127.0.0.1:0",
		"PARCELA_OPS_ADDR":              "127.0.0.1:0",
		"PARCELA_WEBHOOK_ALLOWED_CIDRS": "127.0.0.0/8",
		"PARCELA_TOKEN_CACHE_TTL":       "0s",
	}
	for k, v := range extra {
		vars[k] = v
	}
	ts := &testServer{dsn: dsn, stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"serve"}, args...), env(vars), ts.stdout, ts.stderr) }()
	var once sync.Once
	ts.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve returned %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop within 30 s")
			}
		})
	}
	t.Cleanup(ts.stop)
	deadline := time.Now().Add(30 * time.Second)
	for ts.prod == "" || ts.sandbox == "" || ts.ops == "" {
		select {
		case err := <-done:
			t.Fatalf("serve exited early: %v\n%s", err, ts.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no addresses printed:\n%s\n%s", ts.stdout.String(), ts.stderr.String())
		}
		for _, line := range strings.Split(ts.stdout.String(), "\n") {
			if a, ok := strings.CutPrefix(line, "production "); ok {
				ts.prod = a
			} else if a, ok := strings.CutPrefix(line, "sandbox "); ok {
				ts.sandbox = a
			} else if a, ok := strings.CutPrefix(line, "operations "); ok {
				ts.ops = a
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, base := range []string{ts.prod, ts.sandbox} {
		for {
			resp, err := http.Get(base + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s/healthz never answered 200: %v", base, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return ts
}

// cli runs one parcela command and returns its stdout.
func cli(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &errb); err != nil {
		t.Fatalf("parcela %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// newCompanyToken creates a company and a token through the CLI.
func newCompanyToken(t *testing.T, dsn, env string) (companyID, tokenID, token string) {
	t.Helper()
	var c struct{ ID string }
	if err := json.Unmarshal([]byte(cli(t, dsn, "company", "create", "--name", "Escola "+sqldbtest.Suffix(), "--document", "11222333000181",
		"--slug", "escola-"+sqldbtest.Suffix(), "--max-interest-rate", "0.0299", "--json")), &c); err != nil || c.ID == "" {
		t.Fatalf("company create --json: %v", err)
	}
	var tok struct{ ID, Token string }
	if err := json.Unmarshal([]byte(cli(t, dsn, "token", "create", "--company", c.ID, "--environment", env, "--json")), &tok); err != nil {
		t.Fatalf("token create --json: %v", err)
	}
	if !strings.HasPrefix(tok.Token, env+"_") {
		t.Fatalf("token %q lacks prefix %s_", tok.Token, env)
	}
	return c.ID, tok.ID, tok.Token
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) problem(t *testing.T) map[string]any {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q, want application/problem+json; body %s", ct, r.body)
	}
	var p map[string]any
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body: %v: %s", err, r.body)
	}
	for _, k := range []string{"type", "title", "status", "detail", "code", "request_id"} {
		if _, ok := p[k]; !ok {
			t.Fatalf("problem lacks %q: %s", k, r.body)
		}
	}
	if p["request_id"] != r.header.Get("X-Request-Id") || r.header.Get("X-Request-Id") == "" {
		t.Fatalf("request_id %v does not match X-Request-Id %q", p["request_id"], r.header.Get("X-Request-Id"))
	}
	return p
}

func do(t *testing.T, method, url, token string, body io.Reader, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, b}
}

func tempDSN(t *testing.T) string {
	return sqldbtest.DSN(t, sqldb.SQLite)
}

func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	_, tokenID, sandboxToken := newCompanyToken(t, dsn, "sandbox")
	ts := startServer(t, dsn, map[string]string{"PARCELA_SANDBOX_RATE_LIMIT": "1000"})
	v1 := "/external_api/v1/products"

	for _, base := range []string{ts.prod, ts.sandbox} {
		r := do(t, "GET", base+"/readyz", "", nil, nil)
		if r.status != 200 || r.header.Get("X-Request-Id") == "" {
			t.Fatalf("readyz %d %q", r.status, r.header.Get("X-Request-Id"))
		}
	}
	if r := do(t, "GET", ts.ops+"/metrics", "", nil, nil); r.status != 200 || !bytes.Contains(r.body, []byte("parcela_http_requests_total")) {
		t.Fatalf("metrics: %d", r.status)
	} else {
		// SQLite's checkpointer and the read gate are visible to the operator.
		for _, name := range []string{"parcela_sqlite_wal_bytes ", `parcela_sqlite_wal_truncations_total{outcome="emptied"} `,
			`parcela_sqlite_wal_truncations_total{outcome="gave_up"} `,
			`parcela_sqlite_wal_read_drains_total{outcome="emptied"} `, `parcela_sqlite_wal_read_drains_total{outcome="timed_out"} `,
			"parcela_read_gate_waits_total ", "parcela_read_gate_wait_seconds_total "} {
			if !bytes.Contains(r.body, []byte(name)) {
				t.Errorf("metrics lack %s", name)
			}
		}
	}

	// 401: missing, malformed, unknown, and the other environment's token.
	for name, h := range map[string]string{"missing": "", "malformed": "Token abc", "unknown": "Bearer sandbox_nope"} {
		r := do(t, "GET", ts.sandbox+v1, "", nil, map[string]string{"Authorization": h})
		if r.status != 401 || r.problem(t)["code"] != "unauthorized" {
			t.Fatalf("%s token: %d %s", name, r.status, r.body)
		}
	}
	if r := do(t, "GET", ts.prod+v1, sandboxToken, nil, nil); r.status != 401 {
		t.Fatalf("sandbox token on production: %d", r.status)
	}
	if r := do(t, "GET", ts.sandbox+v1, sandboxToken, nil, nil); r.status != 200 {
		t.Fatalf("sandbox token on sandbox: %d %s", r.status, r.body)
	}

	// 404 problem for an unknown route and an unknown id; 405 with Allow.
	r := do(t, "GET", ts.sandbox+"/external_api/v1/nothing-here", sandboxToken, nil, nil)
	if r.status != 404 || r.problem(t)["code"] != "not_found" {
		t.Fatalf("unknown route: %d %s", r.status, r.body)
	}
	// A path the routers would clean is no route, where it was redirected
	// 307 to the cleaned one, which took the POST again.
	for _, path := range []string{"//external_api/v1/products", "/external_api/v1//products", "/pay/../external_api/v1/products"} {
		r := do(t, "POST", ts.sandbox+path, sandboxToken, strings.NewReader(`{"product": {}}`), nil)
		if r.status != 404 || r.problem(t)["code"] != "not_found" {
			t.Fatalf("POST %s: %d %s", path, r.status, r.body)
		}
	}
	r = do(t, "GET", ts.sandbox+v1+"/0195a3f0-0000-7000-8000-000000000000", sandboxToken, nil, nil)
	if r.status != 404 || r.problem(t)["status"] != float64(404) {
		t.Fatalf("unknown id: %d %s", r.status, r.body)
	}
	r = do(t, "DELETE", ts.sandbox+v1, sandboxToken, nil, nil)
	if r.status != 405 || r.header.Get("Allow") == "" {
		t.Fatalf("wrong method: %d allow=%q", r.status, r.header.Get("Allow"))
	}
	r.problem(t)

	// 413 above 1 MiB, 415 for a body that is not JSON, 400 for bad JSON.
	big := bytes.Repeat([]byte("a"), (1<<20)+10)
	r = do(t, "POST", ts.sandbox+v1, sandboxToken, bytes.NewReader(big), nil)
	if r.status != 413 || r.problem(t)["code"] != "payload_too_large" {
		t.Fatalf("big body: %d %s", r.status, r.body)
	}
	r = do(t, "POST", ts.sandbox+v1, sandboxToken, strings.NewReader("name=x"), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if r.status != 415 || r.problem(t)["code"] != "unsupported_media_type" {
		t.Fatalf("form body: %d %s", r.status, r.body)
	}
	r = do(t, "POST", ts.sandbox+v1, sandboxToken, strings.NewReader("{bad"), nil)
	if r.status != 400 || r.problem(t)["code"] != "malformed_request" {
		t.Fatalf("bad json: %d %s", r.status, r.body)
	}

	// A revoked token stops working.
	cli(t, dsn, "token", "revoke", tokenID)
	if r := do(t, "GET", ts.sandbox+v1, sandboxToken, nil, nil); r.status != 401 {
		t.Fatalf("revoked token: %d", r.status)
	}
	// No token or personal data in the logs.
	if strings.Contains(ts.stderr.String(), sandboxToken) {
		t.Fatal("a token reached the logs")
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	_, _, token := newCompanyToken(t, dsn, "sandbox")
	ts := startServer(t, dsn, map[string]string{"PARCELA_SANDBOX_RATE_LIMIT": "3"})
	var limited response
	for i := 0; i < 20; i++ {
		r := do(t, "GET", ts.sandbox+"/external_api/v1/products", token, nil, nil)
		if r.status == 429 {
			limited = r
			break
		}
	}
	if limited.status != 429 {
		t.Fatal("20 requests at once were never limited at 3/s")
	}
	if limited.header.Get("Retry-After") == "" || limited.problem(t)["code"] != "rate_limited" {
		t.Fatalf("429 without Retry-After or code: %v %s", limited.header, limited.body)
	}
}

// The payer pages' GETs are limited per client address at
// PARCELA_PAGE_RATE_LIMIT: one request in 100,000 s lets the demo's offer
// page through once, then answers a page saying to wait.
func TestPageRateLimit(t *testing.T) {
	t.Parallel()
	ts := startServer(t, tempDSN(t), map[string]string{"PARCELA_PAGE_RATE_LIMIT": "0.00001"}, "--demo")
	page := ""
	for _, line := range strings.Split(ts.stdout.String(), "\n") {
		if u, ok := strings.CutPrefix(line, "offer page: "); ok {
			page = u
		}
	}
	if r := do(t, "GET", page, "", nil, nil); r.status != 200 {
		t.Fatalf("first: %d", r.status)
	}
	r := do(t, "GET", page, "", nil, nil)
	if r.status != 429 || r.header.Get("Retry-After") == "" || !bytes.Contains(r.body, []byte("recarregue a página")) {
		t.Fatalf("second: %d %v", r.status, r.header)
	}
}

func TestCLI(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	companyID, tokenID, token := newCompanyToken(t, dsn, "production")
	list := cli(t, dsn, "token", "list", "--company", companyID)
	if !strings.Contains(list, tokenID) || strings.Contains(list, token) || !strings.Contains(list, token[:17]) {
		t.Fatalf("token list must show the prefix and never the token:\n%s", list)
	}
	var companies []map[string]any
	if err := json.Unmarshal([]byte(cli(t, dsn, "company", "list", "--json")), &companies); err != nil || len(companies) != 1 || companies[0]["id"] != companyID {
		t.Fatalf("company list --json: %v %v", companies, err)
	}

	bad := map[string][]string{
		"unknown command":   {"frobnicate"},
		"unknown flag":      {"company", "create", "--nope"},
		"bad rate":          {"company", "create", "--name", "X", "--document", "11222333000181", "--slug", "x", "--fine-rate", "abc"},
		"fine over 2%":      {"company", "create", "--name", "X", "--document", "11222333000181", "--slug", "x", "--fine-rate", "0.03"},
		"bad environment":   {"token", "create", "--company", companyID, "--environment", "staging"},
		"missing company":   {"token", "create", "--company", "nope", "--environment", "sandbox"},
		"unreachable db":    {"migrate", "--database", "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"},
		"missing db dir":    {"migrate", "--database", filepath.Join(t.TempDir(), "no", "such", "dir", "x.db")},
		"revoke without id": {"token", "revoke"},
		"revoke flags only": {"token", "revoke", "--database", dsn},
		"revoke two ids":    {"token", "revoke", "--database", dsn, "a", "b"},
	}
	for name, args := range bad {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &errb)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if line := errorLine(err); strings.Contains(line, "\n") || line == "" || strings.Contains(line, "goroutine") {
			t.Errorf("%s: want one line, got %q", name, line)
		}
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "demo.db")
	ts := startServer(t, dsn, nil, "--demo")
	out := ts.stdout.String()
	i := strings.Index(out, "sandbox_")
	if i < 0 {
		t.Fatalf("no sandbox token printed:\n%s", out)
	}
	token := strings.Fields(out[i:])[0]
	token = strings.TrimSuffix(token, "'")
	if !strings.Contains(out, "curl") {
		t.Fatalf("no curl line:\n%s", out)
	}
	if r := do(t, "GET", ts.sandbox+"/external_api/v1/offers", token, nil, nil); r.status != 200 || !bytes.Contains(r.body, []byte(`"total_items":1`)) {
		t.Fatalf("demo token: %d %s", r.status, r.body)
	}
	if !strings.Contains(out, "offer ") || !strings.Contains(out, "financed configuration") {
		t.Fatalf("demo ids not printed:\n%s", out)
	}
	// The offer's page, as printed, sells the demo course.
	page := ""
	for _, line := range strings.Split(out, "\n") {
		if u, ok := strings.CutPrefix(line, "offer page: "); ok {
			page = u
		}
	}
	if !strings.HasPrefix(page, ts.sandbox+"/pay/demo/offers/") {
		t.Fatalf("offer page %q not printed on the sandbox listener:\n%s", page, out)
	}
	if r := do(t, "GET", page, "", nil, nil); r.status != 200 || !bytes.Contains(r.body, []byte("Curso de Confeitaria Profissional")) ||
		!bytes.Contains(r.body, []byte(":credit_card")) {
		t.Fatalf("offer page: %d", r.status)
	}
	// The pages are counted with the API's requests, by route: an operator
	// watching the 5xx saw none of the checkout's.
	// (A request is counted once its answer is sent.)
	for _, want := range []string{`parcela_http_requests_total{environment="sandbox",route="GET /pay/{slug}/offers/{offer}",status="200"} 1`,
		`parcela_http_request_duration_seconds_count{environment="sandbox",route="GET /pay/{slug}/offers/{offer}"} 1`} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if bytes.Contains(do(t, "GET", ts.ops+"/metrics", "", nil, nil).body, []byte(want)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("metrics lack %s", want)
			}
		}
	}
	_ = os.Getenv
}
