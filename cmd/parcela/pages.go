package main

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	urlpath "path"
	"strings"
	"time"

	"parcela"
	"parcela/server"
	"parcela/web"
)

// pagesConfig is the payer's pages' part of the serve configuration.
type pagesConfig struct {
	// secret keys the pages' CSRF tokens; every instance behind one
	// address needs the same one.
	secret []byte
	// random tells that no secret was configured and one was drawn.
	random bool
}

// minPagesSecret is the shortest PARCELA_PAGES_SECRET taken: 32 bytes.
const minPagesSecret = 32

func readPagesConfig(getenv func(string) string) (pagesConfig, error) {
	var c pagesConfig
	if s := getenv("PARCELA_PAGES_SECRET"); s != "" {
		if len(s) < minPagesSecret {
			return c, fmt.Errorf("PARCELA_PAGES_SECRET: must be at least %d characters (it keys the pages' form tokens)", minPagesSecret)
		}
		c.secret = []byte(s)
	} else {
		c.secret, c.random = make([]byte, 32), true
		rand.Read(c.secret)
	}
	return c, nil
}

// withPages serves the payer's pages of env under /pay/ and /checkout/ and
// the API (with its docs) everywhere else. lim holds the proxies whose
// X-Forwarded-For names the customer (PARCELA_TRUSTED_PROXIES), the
// pages' rate per client address (PARCELA_PAGE_RATE_LIMIT) and the orders
// each address creates in an hour in production (PARCELA_PAGE_ORDERS_PER_HOUR), counted
// by counter when instances share one (PostgreSQL), nil otherwise.
func withPages(api http.Handler, app *parcela.Services, env parcela.Environment, links parcela.Links, clock parcela.Clock,
	cfg pagesConfig, lim serveLimits, counter server.RateCounter, log *slog.Logger, metrics *server.Metrics) http.Handler {
	var cards parcela.CardChargeService // nil: the environment takes no card
	if app.Checkout.TakesCards(env) {
		cards = app.Orders
	}
	ordersPerHour := lim.pageOrdersPerHour
	if env == parcela.Sandbox {
		// Sandbox boletos cost nothing, and a seller testing its offer
		// page (its CI too) makes many orders from one address.
		ordersPerHour = -1
	}
	var orderCounter web.RateCounter // nil: counted in this process
	if counter != nil {
		orderCounter = counter // instances on one database share the addresses' order counts
	}
	pages := web.New(web.Deps{Checkout: app.Checkout, Orders: app.Orders, CardCharges: cards, Payments: app.Payments, Clock: clock,
		Environment: env, Links: links, Logger: log.With("component", "pages"), Secret: cfg.secret, TrustedProxies: lim.trustedProxies,
		PageRateLimit: lim.pageRate, OrdersPerHour: ordersPerHour, OrderCounter: orderCounter, Observe: func(route string, status int, d time.Duration) { metrics.Observe(env, route, status, d) }})
	return byPrefix(pages, api)
}

// byPrefix sends the pages' paths to pages and every other to api, as
// written: a ServeMux would first redirect (307) a path it cleans
// (//external_api/v1/orders, /pay/../external_api/v1/orders) to the
// cleaned one, and a client following it sent its POST again to a path
// it never named. A path that is not clean goes to api, whose answer is
// its 404 problem.
func byPrefix(pages, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		if (strings.HasPrefix(p, "/pay/") || strings.HasPrefix(p, "/checkout/")) && urlpath.Clean(p) == strings.TrimSuffix(p, "/") {
			pages.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
