// Package web serves the payer's pages: an offer's purchase page, the
// order's page and a bill's checkout (Pix, boleto or card). They are
// server-rendered in Brazilian Portuguese, work without JavaScript (the
// script only enhances), use no API token, and reach the domain only through
// the root package's use-case interfaces.
package web

import (
	"crypto/rand"
	"html/template"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"parcela"
)

// Deps is everything the pages need.
type Deps struct {
	Checkout parcela.CheckoutService
	Orders   parcela.FormOrderService
	// CardCharges charges an order whose first bill is paid by card. When
	// nil, no acquirer serves this listener's environment, and neither the
	// offer page nor the checkout offers a card.
	CardCharges parcela.CardChargeService
	Payments    parcela.PaymentService // PublicPayment, for a payment's own page
	Clock       parcela.Clock
	Environment parcela.Environment // the sandbox shows a test banner
	// Links is the listener's public address; when it is https, the form
	// cookie is Secure. The pages link to each other and to the images by
	// path.
	Links  parcela.Links
	Logger *slog.Logger
	// Observe, when set, counts each request by route pattern ("" for no
	// route), status and duration, as the API's are.
	Observe func(route string, status int, d time.Duration)
	// Secret keys the forms' CSRF tokens. Replicas behind one address must
	// share it; when empty, a random one is made and forms posted across a
	// restart are answered with a fresh form.
	Secret []byte
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client; any other peer is the client itself.
	TrustedProxies []netip.Prefix
	// PostsPerMinute bounds the POSTs of one client address (default 30).
	PostsPerMinute int
	// OrdersPerHour bounds the orders one client address (an IPv6 /64)
	// creates from the offer pages in a clock hour (default 60; negative:
	// no limit). A form sent again for the order it created is not another.
	OrdersPerHour int
	// OrderCounter counts them for every instance on the database; nil
	// counts in this process.
	OrderCounter RateCounter
	// PageRateLimit bounds the GETs of one client address, in requests per
	// second (the assets aside); 0: no limit.
	PageRateLimit float64
	// Refresh is how often a page waiting for a payment checks it (default 5 s).
	Refresh time.Duration
}

// Handler serves the pages. Mount it for the paths under /pay/ and
// /checkout/.
type Handler struct {
	d           Deps
	log         *slog.Logger
	pages       map[string]*template.Template
	frags       *fragments // the pages' parts kept rendered
	assets      *assetSet
	csrf        *csrf
	limits      *postLimits
	reads       *pageLimits // the GETs'
	submissions *submissions
	orders      *orderLimits // the orders each address creates
	mux         *http.ServeMux
	served      http.Handler // mux behind the pages' protections
}

// New builds the pages' handler.
func New(d Deps) *Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if len(d.Secret) == 0 {
		d.Secret = make([]byte, 32)
		rand.Read(d.Secret)
	}
	if d.PostsPerMinute <= 0 {
		d.PostsPerMinute = 30
	}
	if d.Refresh <= 0 {
		d.Refresh = 5 * time.Second
	}
	h := &Handler{
		d:           d,
		log:         d.Logger,
		assets:      loadAssets(),
		csrf:        &csrf{key: d.Secret},
		limits:      newPostLimits(d.PostsPerMinute),
		reads:       newPageLimits(d.PageRateLimit),
		submissions: newSubmissions(10000, time.Hour),
		orders:      newOrderLimits(d.OrdersPerHour, d.Environment, d.Clock, d.OrderCounter),
		mux:         http.NewServeMux(),
	}
	h.pages, h.frags = parsePages()
	h.routes()
	h.served = h.base(h.mux)
	return h
}

// The GETs the per-address limit does not count: the pages' style, script
// and icons, and a state's cities for the address form, served from memory
// with no database read. A page load asks for several assets, and the
// form asks for cities at each change of the state (a keyboard choosing
// it by typing its name changes it at each letter); a refused list of
// cities left the city field disabled.
const (
	assetRoute  = "GET /pay/assets/{name}"
	citiesRoute = "GET /pay/cities/{state}"
)

// routes is every page, on one page.
func (h *Handler) routes() {
	h.mux.HandleFunc("GET /pay/{slug}/offers/{offer}", h.handleOffer)
	h.mux.HandleFunc("POST /pay/{slug}/offers/{offer}", h.handleBuy)
	h.mux.HandleFunc("GET /pay/{slug}/offers/{offer}/plan", h.handlePlanPreview)
	h.mux.HandleFunc("GET /pay/orders/{order}", h.handleOrder)
	h.mux.HandleFunc(citiesRoute, h.handleCities)
	h.mux.HandleFunc(assetRoute, h.handleAsset)

	h.mux.HandleFunc("GET /checkout/bills/{bill}", h.handleCheckout)
	h.mux.HandleFunc("POST /checkout/bills/{bill}/pix", h.handleIssue(parcela.MethodPix))
	h.mux.HandleFunc("POST /checkout/bills/{bill}/boleto", h.handleIssue(parcela.MethodBoleto))
	h.mux.HandleFunc("POST /checkout/bills/{bill}/card", h.handleCard)
	h.mux.HandleFunc("GET /checkout/payments/{payment}", h.handlePayment)
}

// ServeHTTP applies the pages' protections, then routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.served.ServeHTTP(w, r)
}
