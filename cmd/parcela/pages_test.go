package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela/api"
	"parcela/client"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// The payer's pages on the real server: `parcela serve` as run starts it,
// both listeners, its jobs, on each engine. The browser tests are in
// browser_test.go; this file sets up the seller they buy from.

// shop is a seller on a running server: a company with a sandbox token
// and an offer like the demo's, which takes Pix, boleto and cards.
type shop struct {
	t        *testing.T
	ts       *testServer
	engine   sqldb.Dialect
	token    string
	offerID  string
	offerURL string // the offer's page, as the API gives it
	upfront  string // configuration ids
	financed string
	contract *api.Contract
}

var (
	contractOnce sync.Once
	contract     *api.Contract
	contractErr  error
)

// newShop starts a server on a database of engine e and sets up the shop.
func newShop(t *testing.T, e sqldb.Dialect, extra map[string]string) *shop {
	t.Helper()
	contractOnce.Do(func() { contract, contractErr = api.LoadContract() })
	if contractErr != nil {
		t.Fatal(contractErr)
	}
	dsn := sqldbtest.DSN(t, e)
	_, _, token := newCompanyToken(t, dsn, "sandbox")
	s := &shop{t: t, engine: e, token: token, contract: contract, ts: startServer(t, dsn, extra)}
	product := s.api("POST", "/products", `{"product": {"name": "Curso de Confeitaria Profissional", "full_amount_cents": 240000,
		"kind": "course", "access_period": "days", "duration_in_days": 365, "description": "Do básico ao avançado, com certificado."}}`, 201)
	offer := s.api("POST", "/offers", `{"offer": {"name": "Turma regular", "product_id": "`+product["id"].(string)+`", "amount_cents": 199000},
		"payment_configurations": [
		{"payment_type": "upfront", "payment_methods": ["pix", "boleto", "credit_card"]},
		{"payment_type": "financed", "payment_methods": ["boleto", "pix"], "allowed_down_payment_methods": ["pix", "boleto", "credit_card"],
		 "down_payment_type": "percentage", "down_payment_value": 0.2, "interest_rate": 0.0199, "max_installments": 12}]}`, 201)
	s.offerID, s.offerURL = offer["id"].(string), offer["url"].(string)
	configs := offer["payment_configurations"].([]any)
	s.upfront, s.financed = configs[0].(map[string]any)["id"].(string), configs[1].(map[string]any)["id"].(string)
	return s
}

// api calls the sandbox API, checks the status and the response against
// the OpenAPI document, and returns the JSON body.
func (s *shop) api(method, path, body string, status int) map[string]any {
	s.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	res := do(s.t, method, s.ts.sandbox+"/external_api/v1"+path, s.token, r, nil)
	if res.status != status {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, res.status, status, res.body)
	}
	req, _ := http.NewRequest(method, "http://contract/external_api/v1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := s.contract.ValidateResponse(req, res.status, res.header, res.body); err != nil {
		s.t.Fatalf("%s %s does not match api/openapi.yaml: %v\n%s", method, path, err, res.body)
	}
	var out map[string]any
	if len(res.body) > 0 {
		if err := json.Unmarshal(res.body, &out); err != nil {
			s.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return out
}

// chargedOrder creates an order through the API and charges it: financed
// in installments bills with a down payment by method, or upfront when
// installments is 1.
func (s *shop) chargedOrder(method string, installments int) map[string]any {
	s.t.Helper()
	o := s.api("POST", "/orders", `{"order": {"offer_id": "`+s.offerID+`", "customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17",
		"customer_document": "52998224725", "email": "maria@example.com", "phone": "11987654321", "address": {"zipcode": "01310100",
		"street": "Avenida Paulista", "number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`, 201)
	config := s.financed
	if installments == 1 {
		config = s.upfront
	}
	return s.api("POST", "/orders/"+o["id"].(string)+"/charge", fmt.Sprintf(`{"payment_configuration_id": %q, "due_day": 10,
		"installments": %d, "payment": {"payment_method": %q}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`,
		config, installments, method), 200)
}

// bills lists the ids of an order's bills in their order.
func bills(order map[string]any) []string {
	var ids []string
	for _, b := range order["billings"].([]any)[0].(map[string]any)["bills"].([]any) {
		ids = append(ids, b.(map[string]any)["id"].(string))
	}
	return ids
}

func payments(bill map[string]any) []map[string]any {
	var out []map[string]any
	for _, p := range bill["payments"].([]any) {
		out = append(out, p.(map[string]any))
	}
	return out
}

// path is the path and query of an absolute address the API gave.
func path(t *testing.T, address string) string {
	t.Helper()
	u, err := url.Parse(address)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

// receiver is a webhook endpoint on 127.0.0.1 that keeps what it gets.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies, r.heads = append(r.bodies, b), append(r.heads, req.Header.Clone())
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// event waits for a delivered event of entity and event about id, checks
// its signature with secret, and returns its body.
func (r *receiver) event(t *testing.T, secret, entity, event, id string) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for i, b := range r.bodies {
			var e struct {
				Entity, Event string
				Data          struct{ ID string }
			}
			if json.Unmarshal(b, &e) == nil && e.Entity == entity && e.Event == event && e.Data.ID == id {
				h := r.heads[i]
				r.mu.Unlock()
				if err := client.VerifyWebhook(secret, h, b); err != nil {
					t.Fatalf("%s.%s delivered with a bad signature: %v", entity, event, err)
				}
				return b
			}
		}
		r.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s.%s webhook for %s delivered within 30 s", entity, event, id)
	return nil
}

// all returns every body received.
func (r *receiver) all() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Join(r.bodies, []byte("\n"))
}

// webhook subscribes the receiver to the shop's bill events and returns
// the signing secret.
func (s *shop) webhook(r *receiver) string {
	s.t.Helper()
	w := s.api("POST", "/webhooks", `{"name": "pages test", "url": "`+r.URL+`/hook", "verb": "post", "entity": "bill",
		"events": ["pending", "paid", "canceled"]}`, 201)
	return w["secret"].(string)
}

// pages is an HTTP client of the pages that keeps their cookie, as a
// browser would, and every body it got.
type pages struct {
	t      *testing.T
	base   string
	client *http.Client
	seen   bytes.Buffer
}

func newPages(t *testing.T, base string) *pages {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &pages{t: t, base: base, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (p *pages) do(method, target string, form url.Values) (int, http.Header, string) {
	p.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(context.Background(), method, p.base+target, body)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("User-Agent", "parcela-pages-test")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", p.base)
	}
	res, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	p.seen.Write(b)
	return res.StatusCode, res.Header, string(b)
}

// hidden reads a hidden input's value from a page.
func hidden(page, name string) string {
	i := strings.Index(page, `name="`+name+`" value="`)
	if i < 0 {
		return ""
	}
	rest := page[i+len(`name="`+name+`" value="`):]
	return rest[:strings.IndexByte(rest, '"')]
}

// postForm posts a form of the page at target (with its code, CSRF token
// and nonce) to action.
func (p *pages) postForm(target, action string, form url.Values) (int, http.Header, string) {
	p.t.Helper()
	status, _, page := p.do("GET", target, nil)
	if status != 200 {
		p.t.Fatalf("GET %s: %d", target, status)
	}
	for _, name := range []string{"code", "csrf", "nonce"} {
		form.Set(name, hidden(page, name))
	}
	if _, ok := form["card_number"]; ok && !form.Has("card_amount") {
		form.Set("card_amount", hidden(page, "card_amount")) // as a browser sends the card form's total
	}
	return p.do("POST", action, form)
}

func TestPagesSecretFromEnvironment(t *testing.T) {
	t.Parallel()
	c, err := readPagesConfig(env(nil))
	if err != nil || !c.random || len(c.secret) != 32 {
		t.Fatalf("no secret: %+v, %v", c, err)
	}
	other, _ := readPagesConfig(env(nil))
	if bytes.Equal(c.secret, other.secret) {
		t.Fatal("two starts drew the same secret")
	}
	set := strings.Repeat("s", 32)
	if c, err := readPagesConfig(env(map[string]string{"PARCELA_PAGES_SECRET": set})); err != nil || c.random || string(c.secret) != set {
		t.Fatalf("a set secret: %+v, %v", c, err)
	}
	if _, err := readPagesConfig(env(map[string]string{"PARCELA_PAGES_SECRET": "short"})); err == nil || !strings.Contains(err.Error(), "PARCELA_PAGES_SECRET") {
		t.Fatalf("a short secret: %v", err)
	}
}
