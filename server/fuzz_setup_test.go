package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"parcela"
	"parcela/api"
	"parcela/jobs"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// fuzzServer is the sandbox listener over a SQLite store, called in
// process, with one of each entity for fuzzed requests to aim at. Every
// fuzz worker builds its own.
type fuzzServer struct {
	h     http.Handler
	token string
	// ids replaces the placeholders seeds use for real ids: {product},
	// {offer}, {upfront}, {financed}, {order}, {billing}, {bill},
	// {payment}, {webhook}, {delivery}.
	ids map[string]string
}

func newFuzzServer(f *testing.F) *fuzzServer {
	f.Helper()
	clock := parcela.NewTestClock(start)
	enq, err := jobs.NewEnqueuer("")
	if err != nil {
		f.Fatal(err)
	}
	db := sqldbtest.Open(f, sqldb.SQLite, sqldb.Config{Clock: clock, Enqueuer: enq})
	app := sqldbtest.Services(db, clock)
	company := sqldbtest.Company(f, db)
	s := &fuzzServer{
		h: server.New(server.ServicesOf(app, db), server.Config{Environment: parcela.Sandbox, Clock: clock,
			PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}),
		token: sqldbtest.Token(f, db, company.ID, parcela.Sandbox),
		ids:   map[string]string{},
	}
	must := func(status int, body []byte) map[string]any {
		var m map[string]any
		if status >= 300 || json.Unmarshal(body, &m) != nil {
			f.Fatalf("fixture: %d %s", status, body)
		}
		return m
	}
	jsonOf := func(v any) []byte { b, _ := json.Marshal(v); return b }
	s.ids["webhook"] = must(s.serve("POST", "/external_api/v1/webhooks", nil, jsonOf(map[string]any{"name": "ERP",
		"url": "https://erp.example.com/hooks", "entity": "order", "events": []string{"in_progress"}, "verb": "post"})))["id"].(string)
	s.ids["product"] = must(s.serve("POST", "/external_api/v1/products", nil, jsonOf(productBody())))["id"].(string)
	// The offer sells without a seat limit: every fuzzed charge that
	// succeeds takes a seat, and a run of a few seconds can charge more
	// orders than the shared fixture's 30 seats (then no new order could
	// be created for the next input).
	ob := offerBody(s.ids["product"])
	delete(ob["offer"].(map[string]any), "seats")
	offer := must(s.serve("POST", "/external_api/v1/offers", nil, jsonOf(ob)))
	s.ids["offer"] = offer["id"].(string)
	s.ids["upfront"], s.ids["financed"] = configs(offer)
	s.ids["order"] = s.newOrder(f)
	charged := must(s.serve("POST", "/external_api/v1/orders/"+s.ids["order"]+"/charge", nil, jsonOf(chargeBody(s.ids["financed"], "pix", 3))))
	billing := charged["billings"].([]any)[0].(map[string]any)
	bill := billing["bills"].([]any)[0].(map[string]any)
	s.ids["billing"], s.ids["bill"] = billing["id"].(string), bill["id"].(string)
	s.ids["payment"] = bill["payments"].([]any)[0].(map[string]any)["id"].(string)
	deliveries := must(s.serve("GET", "/external_api/v1/webhook_deliveries", nil, nil))["results"].([]any)
	s.ids["delivery"] = deliveries[0].(map[string]any)["id"].(string)
	return s
}

// newOrder creates a pending order of the fixture offer.
func (s *fuzzServer) newOrder(t testing.TB) string {
	t.Helper()
	body, _ := json.Marshal(orderBody(s.ids["offer"]))
	status, out := s.serve("POST", "/external_api/v1/orders", nil, body)
	var o map[string]any
	if status != http.StatusCreated || json.Unmarshal(out, &o) != nil {
		t.Fatalf("order: %d %s", status, out)
	}
	return o["id"].(string)
}

// fill replaces the id placeholders in b.
func (s *fuzzServer) fill(b []byte) []byte {
	if !bytes.Contains(b, []byte("{")) {
		return b
	}
	for name, id := range s.ids {
		b = bytes.ReplaceAll(b, []byte("{"+name+"}"), []byte(id))
	}
	return b
}

// serve sends one request with the fixture token: path is unescaped (as a
// server sees it after decoding), query raw.
func (s *fuzzServer) serve(method, path string, query *string, body []byte) (int, []byte) {
	rec := s.record(method, path, query, body)
	return rec.Code, rec.Body.Bytes()
}

func (s *fuzzServer) record(method, path string, query *string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/", bytes.NewReader(body))
	req.URL = &url.URL{Path: path, RawPath: escapePath(path)}
	if query != nil {
		req.URL.RawQuery = *query
	}
	req.RequestURI = req.URL.RequestURI()
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	return rec
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i := range parts {
		parts[i] = url.PathEscape(parts[i])
	}
	return strings.Join(parts, "/")
}

// check sends a fuzzed request and fails on a server error (a recovered
// panic is one) or on a 4xx that is not a problem document.
func (s *fuzzServer) check(t *testing.T, method, path string, query *string, body []byte) int {
	t.Helper()
	rec := s.record(method, path, query, body)
	res := rec.Result()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 500 {
		t.Fatalf("%s %s?%v → %d: %s\nbody: %q", method, path, query, res.StatusCode, out, body)
	}
	if res.StatusCode >= 400 {
		var p server.Problem
		if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Fatalf("%s %s → %d with Content-Type %q", method, path, res.StatusCode, ct)
		}
		if err := json.Unmarshal(out, &p); err != nil || p.Status != res.StatusCode || p.Code == "" || p.Title == "" ||
			p.Detail == "" || p.RequestID == "" || !strings.HasSuffix(p.Type, "#"+p.Code) {
			t.Fatalf("%s %s → %d, not a problem document: %s", method, path, res.StatusCode, out)
		}
	}
	return res.StatusCode
}
