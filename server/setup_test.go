package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/api"
	"parcela/jobs"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

func TestMain(m *testing.M) { sqldbtest.MainChecked(m, checkAnswered) }

var (
	contractOnce sync.Once
	contract     *api.Contract
	contractErr  error
)

func loadContract(t testing.TB) *api.Contract {
	contractOnce.Do(func() { contract, contractErr = api.LoadContract() })
	if contractErr != nil {
		t.Fatalf("load contract: %v", contractErr)
	}
	return contract
}

// bundle is what a test gets from setup: a store, the use cases over it, a
// clock, both listeners and a company with a token per environment.
type bundle struct {
	t            *testing.T
	db           *sqldb.DB
	enq          *jobs.Enqueuer
	app          *parcela.Services
	sweeps       *parcela.Sweeps // of the bundle's company alone
	clock        *parcela.TestClock
	sandbox      *httptest.Server
	production   *httptest.Server
	company      *parcela.Company
	token        string // sandbox
	prodToken    string
	otherToken   string // another company's sandbox token
	contract     *api.Contract
	skipContract bool
}

// start is the clock's starting point in every test: a Saturday afternoon in São Paulo.
var start = time.Date(2026, 11, 21, 15, 30, 0, 0, parcela.SaoPaulo)

func setup(t *testing.T, e sqldb.Dialect, store ...func(*sqldb.Config)) *bundle {
	t.Helper()
	clock := parcela.NewTestClock(start)
	// Each test works its own delivery queue on the shared PostgreSQL database.
	enq, err := jobs.NewEnqueuer("webhooks_" + sqldbtest.Suffix())
	if err != nil {
		t.Fatal(err)
	}
	cfg := sqldb.Config{Clock: clock, Enqueuer: enq}
	for _, f := range store {
		f(&cfg)
	}
	db := sqldbtest.Open(t, e, cfg)
	app := sqldbtest.Services(db, clock)
	b := &bundle{t: t, db: db, enq: enq, app: app, clock: clock, contract: loadContract(t)}
	b.company = sqldbtest.Company(t, db)
	b.sweeps = app.Sweeps.Only(b.company.ID)
	svc := server.ServicesOf(app, db)
	b.sandbox = httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Sandbox, Clock: clock,
		PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}))
	b.production = httptest.NewServer(server.New(svc, server.Config{Environment: parcela.Production, Clock: clock,
		PublicURL: sqldbtest.Links[parcela.Production].PublicURL, OpenAPI: api.Spec}))
	t.Cleanup(b.sandbox.Close)
	t.Cleanup(b.production.Close)
	b.token = sqldbtest.Token(t, db, b.company.ID, parcela.Sandbox)
	b.prodToken = sqldbtest.Token(t, db, b.company.ID, parcela.Production)
	other := sqldbtest.Company(t, db)
	b.otherToken = sqldbtest.Token(t, db, other.ID, parcela.Sandbox)
	return b
}

// each runs fn on every engine with its own bundle.
func each(t *testing.T, fn func(t *testing.T, b *bundle)) {
	t.Helper()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, e))
		})
	}
}

type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r resp) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// call sends a request with the sandbox token to the sandbox listener.
func (b *bundle) call(method, path string, body any) resp {
	b.t.Helper()
	return b.send(b.sandbox.URL, b.token, method, path, body, nil)
}

// send makes a request and checks the response against the OpenAPI contract.
func (b *bundle) send(base, token, method, path string, body any, header map[string]string) resp {
	b.t.Helper()
	var raw []byte
	switch v := body.(type) {
	case nil:
	case string:
		raw = []byte(v)
	case []byte:
		raw = v
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			b.t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, base+path, bytes.NewReader(raw))
	if err != nil {
		b.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	r := resp{res.StatusCode, res.Header, out}
	if !b.skipContract {
		vreq, _ := http.NewRequest(method, "http://contract"+path, bytes.NewReader(raw))
		vreq.Header = req.Header.Clone()
		recordAnswer(vreq, res.StatusCode)
		observePresence(vreq, res.StatusCode, res.Header, out)
		if err := b.contract.ValidateResponse(vreq, res.StatusCode, res.Header, out); err != nil {
			b.t.Errorf("%s %s → %d does not match api/openapi.yaml: %v\n%s", method, path, res.StatusCode, err, out)
		}
	}
	return r
}

// want fails unless the response has status.
func (r resp) want(t testing.TB, status int) resp {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
