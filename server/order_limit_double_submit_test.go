package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb/sqldbtest"
	"parcela/web"
)

// racingFormLookups holds every FormOrder lookup until two have arrived
// (or a second passed): the two posts of one form both look for its order
// before either creates it, as a double click reaching two instances does.
type racingFormLookups struct {
	parcela.FormOrderService
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func (o *racingFormLookups) FormOrder(ctx context.Context, a parcela.Auth, key string) (*parcela.Order, error) {
	order, err := o.FormOrderService.FormOrder(ctx, a, key)
	o.mu.Lock()
	if o.arrived++; o.arrived == 2 {
		close(o.all)
	}
	o.mu.Unlock()
	select {
	case <-o.all:
	case <-time.After(time.Second):
	}
	return order, err
}

// Two instances on one database (the store's rate windows count for both):
// a double click reaching both makes one order (orders.form_key) and takes
// one of the address's places of the hour. Each instance counted it (an
// audit), and the address's second real order of the hour, under a limit
// of 2, was refused.
func TestSharedOrderLimitCountsADoubleSubmitOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		const v1 = "/external_api/v1"
		p := b.call("POST", v1+"/products", productBody()).want(t, 201).JSON(t)["id"].(string)
		offer := b.call("POST", v1+"/offers", offerBody(p)).want(t, 201).JSON(t)
		up, _ := configs(offer)
		racing := &racingFormLookups{FormOrderService: b.app.Orders, all: make(chan struct{})}
		instance := func() *httptest.Server {
			pages := web.New(web.Deps{Checkout: b.app.Checkout, Orders: racing, Payments: b.app.Payments, Clock: b.clock,
				Environment: parcela.Sandbox, Links: sqldbtest.Links[parcela.Sandbox], Logger: slog.New(slog.DiscardHandler),
				Secret: []byte(strings.Repeat("k", 32)), OrdersPerHour: 2, OrderCounter: b.db, PostsPerMinute: 1000})
			s := httptest.NewServer(pages)
			t.Cleanup(s.Close)
			return s
		}
		one, two := instance(), instance()
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		u, _ := url.Parse(offer["url"].(string))
		var lastLoc sync.Map
		do := func(base, method string, form url.Values) (int, string) {
			var body io.Reader
			if form != nil {
				body = strings.NewReader(form.Encode())
			}
			req, _ := http.NewRequest(method, base+u.Path, body)
			req.Header.Set("User-Agent", "audit")
			if form != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", base)
			}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			all, _ := io.ReadAll(res.Body)
			lastLoc.Store(base, res.Header.Get("Location"))
			return res.StatusCode, string(all)
		}
		hiddenOf := func(page, name string) string {
			m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("no %s in page", name)
			}
			return m[1]
		}
		form := func() url.Values {
			_, page := do(one.URL, "GET", nil)
			return url.Values{"name": {"Maria da Silva"}, "cpf": {"529.982.247-25"}, "birthdate": {"17/05/1990"}, "email": {"maria@example.com"},
				"phone": {"(11) 98765-4321"}, "cep": {"01310-100"}, "street": {"Avenida Paulista"}, "number": {"1000"},
				"neighborhood": {"Bela Vista"}, "state": {"SP"}, "city": {"3550308"}, "option": {up + ":boleto"}, "intent": {"buy"},
				"csrf": {hiddenOf(page, "csrf")}, "nonce": {hiddenOf(page, "nonce")}, "plan_digest." + up: {hiddenOf(page, "plan_digest."+up)}}
		}
		first := form()
		var wg sync.WaitGroup
		status := make([]int, 2)
		for i, s := range []*httptest.Server{one, two} {
			wg.Go(func() { status[i], _ = do(s.URL, "POST", first) })
		}
		wg.Wait()
		if status[0] != 303 || status[1] != 303 {
			t.Fatalf("double submit on two instances: %v", status)
		}
		l1, _ := lastLoc.Load(one.URL)
		l2, _ := lastLoc.Load(two.URL)
		if l1 != l2 || !strings.HasPrefix(l1.(string), "/pay/orders/") {
			t.Fatalf("the double submit went to %q and %q, not one order", l1, l2)
		}
		if st, page := do(two.URL, "POST", form()); st != 303 {
			t.Fatalf("the address's second order of the hour (limit 2, one made): status %d, want 303\n%.300s", st,
				regexp.MustCompile(`(?s)Foram feitos muitos pedidos.*?vendedor\.`).FindString(page))
		}
	})
}
