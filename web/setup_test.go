package web

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/brcode"
)

// bundle is what a test works with: the pages over a fake of the use cases,
// served with the API's public image routes as the real listener would.
type bundle struct {
	store   *fakeStore
	clock   *parcela.TestClock
	server  *httptest.Server
	handler http.Handler // the server's, for benchmarks that skip the network
	pages   *Handler
	company *parcela.Company
	offer   *parcela.Offer
	logs    *syncBuffer
	client  *http.Client
	deps    Deps // what the pages were built with
}

// The demo's sale: R$ 1.990,00, upfront by Pix, boleto or card, or
// financed in up to 12 with 20% down by Pix, boleto or card, at 1.99% a month.
const (
	testOfferID   = "7d1c2b9e-4a3f-4e5d-9c1b-2f3e4d5c6b7a"
	testProductID = "0b9a8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d"
	testUpfront   = "cfg-upfront"
	testFinanced  = "cfg-financed"
	testCardOnly  = "cfg-card"
)

func setup(t testing.TB, opts ...func(*Deps)) *bundle {
	t.Helper()
	// Thursday 2026-03-05 10:00 in São Paulo.
	clock := parcela.NewTestClock(time.Date(2026, time.March, 5, 10, 0, 0, 0, parcela.SaoPaulo))
	store := newFakeStore(clock)
	c := parcela.NewCompany("Escola Demonstração", "11222333000181", "demo")
	c.ID = "company-1"
	store.addCompany(&c)
	store.addCompany(&parcela.Company{ID: "company-2", Name: "Outra Escola", Slug: "outra", Palette: "default"})
	desc := "Do básico ao avançado, com certificado."
	days := 365
	product := &parcela.Product{ID: testProductID, CompanyID: c.ID, Environment: parcela.Sandbox, Name: "Curso de Confeitaria Profissional",
		Description: &desc, AccessPeriod: parcela.AccessDays, DurationInDays: &days, FullAmountCents: 240000, Availability: "enabled"}
	pct, bolepix, one := parcela.DownPaymentPercentage, "bolepix", 1
	offer := &parcela.Offer{ID: testOfferID, CompanyID: c.ID, Environment: parcela.Sandbox, ProductID: product.ID, Name: "Turma regular",
		AmountCents: 199000, Availability: "enabled", Product: product, PaymentConfigurations: []*parcela.PaymentConfiguration{
			{ID: testUpfront, OfferID: testOfferID, PaymentType: parcela.Upfront, PaymentMethods: []string{"pix", "boleto", "credit_card"},
				AllowedDownPaymentMethods: []string{}, Availability: "enabled", ExpiresIn: 72, MaxInstallments: 1, MinInstallmentCents: 5000},
			{ID: testFinanced, OfferID: testOfferID, Position: 1, PaymentType: parcela.Financed, FinancedType: &bolepix, PaymentMethods: []string{"boleto"},
				AllowedDownPaymentMethods: []string{"pix", "boleto", "credit_card"}, Availability: "enabled", ExpiresIn: 72,
				InterestRate: parcela.MustRate("0.0199"), MaxInstallments: 12, MaxDownPaymentInstallments: &one, MinInstallmentCents: 5000,
				DownPaymentType: &pct, DownPaymentValue: parcela.MustRate("0.2")},
		}}
	store.addOffer(offer)
	d := Deps{Checkout: store, Orders: store, CardCharges: store, Payments: store, Clock: clock, Environment: parcela.Sandbox,
		Links: parcela.Links{PublicURL: "http://parcela.test"}, Secret: []byte("test-secret-test-secret-test-secret"), PostsPerMinute: 1000,
		Refresh: time.Second}
	for _, o := range opts {
		o(&d)
	}
	logs := &syncBuffer{}
	d.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	pages := New(d)
	mux := http.NewServeMux()
	mux.Handle("/pay/", pages)
	mux.Handle("/checkout/", pages)
	mux.HandleFunc("GET /external_api/v1/payments/{id}/{image}", paymentImages(store))
	server := httptest.NewServer(mux)
	t.Cleanup(server.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &bundle{store: store, clock: clock, server: server, handler: mux, pages: pages, company: &c, offer: offer, logs: logs, client: client, deps: d}
}

// instance is a second instance of the pages over the same use cases and
// secret, reached by the same browser (its cookies name the host, not the
// port), as replicas behind one address are.
func (b *bundle) instance(t testing.TB) *bundle {
	t.Helper()
	other := *b
	other.pages = New(b.deps)
	mux := http.NewServeMux()
	mux.Handle("/pay/", other.pages)
	mux.Handle("/checkout/", other.pages)
	other.server = httptest.NewServer(mux)
	t.Cleanup(other.server.Close)
	return &other
}

// paymentImages plays the API's public image routes for the pages' <img>s.
func paymentImages(s *fakeStore) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.PublicPayment(r.Context(), parcela.Sandbox, r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		var png []byte
		switch image := r.PathValue("image"); {
		case image == "pix.png" && p.PixCode != nil:
			png, err = brcode.QRCodePNG(*p.PixCode, 512)
		case image == "barcode.png" && p.Method == parcela.MethodPix && p.Barcode != nil:
			png, err = brcode.QRCodePNG(*p.Barcode, 512)
		case image == "barcode.png" && p.BarcodeDigits != nil:
			png, err = brcode.BoletoBarcodePNG(*p.BarcodeDigits)
		default:
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(png)
	}
}

// offerPath is the demo offer's page.
func (b *bundle) offerPath() string { return "/pay/demo/offers/" + b.offer.ID }

type response struct {
	status int
	header http.Header
	body   string
}

func (b *bundle) get(t testing.TB, path string) response {
	t.Helper()
	return b.do(t, http.MethodGet, path, nil)
}

func (b *bundle) post(t testing.TB, path string, form url.Values) response {
	t.Helper()
	return b.do(t, http.MethodPost, path, form)
}

func (b *bundle) do(t testing.TB, method, path string, form url.Values) response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.server.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "parcela-test")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.server.URL)
	}
	return b.roundTrip(t, req)
}

var (
	csrfField  = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	nonceField = regexp.MustCompile(`name="nonce" value="([^"]+)"`)
)

// tokens reads a page's form tokens into a form.
func tokens(t testing.TB, page string, form url.Values) url.Values {
	t.Helper()
	c, n := csrfField.FindStringSubmatch(page), nonceField.FindStringSubmatch(page)
	if c == nil || n == nil {
		t.Fatalf("no form tokens in page:\n%s", page)
	}
	form.Set("csrf", c[1])
	form.Set("nonce", n[1])
	if _, ok := form["card_number"]; ok && !form.Has("card_amount") {
		// As a browser sends the card form's hidden total.
		form.Set("card_amount", hiddenValue(page, "card_amount"))
	}
	return form
}

// hiddenValue reads a hidden input of a page.
func hiddenValue(page, name string) string {
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1]
}

// selectedValue reads the chosen option of a page's select.
func selectedValue(page, name string) string {
	sel := regexp.MustCompile(`(?s)name="` + regexp.QuoteMeta(name) + `".*?</select>`).FindString(page)
	m := regexp.MustCompile(`<option value="([^"]*)" selected>`).FindStringSubmatch(sel)
	if m == nil {
		return ""
	}
	return m[1]
}

// customer is a valid customer for the demo offer, in São Paulo.
func customer() url.Values {
	return url.Values{
		"name": {"Maria da Silva"}, "cpf": {"529.982.247-25"}, "birthdate": {"1990-05-17"}, "email": {"maria@example.com"},
		"phone": {"(11) 98765-4321"}, "cep": {"01310-100"}, "street": {"Avenida Paulista"}, "number": {"1000"},
		"complement": {"Apto 42"}, "neighborhood": {"Bela Vista"}, "state": {"SP"}, "city": {"3550308"},
	}
}

// buyForm fills the offer page's form for a choice, from the page as shown.
func buyForm(t testing.TB, page, option string, extra url.Values) url.Values {
	t.Helper()
	f := tokens(t, page, customer())
	f.Set("option", option)
	f.Set("intent", "buy")
	for _, id := range []string{testUpfront, testFinanced, testCardOnly} {
		if v := hiddenValue(page, "plan_digest."+id); v != "" {
			f.Set("plan_digest."+id, v)
		}
		for _, name := range []string{"installments." + id, "due_day." + id} {
			if v := selectedValue(page, name); v != "" {
				f.Set(name, v)
			}
		}
	}
	for k, v := range extra {
		f[k] = v
	}
	return f
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func netipPrefix(t *testing.T, s string) []netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return []netip.Prefix{p}
}

// getFrom is get as a trusted proxy forwarding client's request.
func (b *bundle) getFrom(t testing.TB, path, client string) response {
	t.Helper()
	return b.getWith(t, path, map[string]string{"X-Forwarded-For": client})
}

// getWith is get with the headers given.
func (b *bundle) getWith(t testing.TB, path string, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.server.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return b.roundTrip(t, req)
}

// roundTrip sends req with the bundle's client and reads the response.
func (b *bundle) roundTrip(t testing.TB, req *http.Request) response {
	t.Helper()
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	all, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: string(all)}
}
