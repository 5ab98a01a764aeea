// Package server is parcela's HTTP API: routes on one page (routes.go),
// authentication, problem+json errors and the handlers, which call the use
// cases and render their results.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"parcela"
	"parcela/api"
)

// Services are the use cases a Server serves, and the store's bookkeeping
// it keeps beside them.
type Services struct {
	Catalog  parcela.CatalogService
	Orders   parcela.OrderService
	Billings parcela.BillingService
	Bills    parcela.BillService
	Payments parcela.PaymentService
	Webhooks parcela.WebhookService
	Tokens   parcela.TokenService
	// Idempotency keeps the responses stored under Idempotency-Keys.
	Idempotency IdempotencyStore
	// Health answers /readyz.
	Health Health
	// RateCounter shares the rate limits' counts between instances (the
	// store on PostgreSQL); nil: each instance counts on its own.
	RateCounter RateCounter
}

// Health tells whether the database answers and takes writes.
type Health interface {
	Ready(ctx context.Context) error
}

// Config is what a Server needs beyond its services.
type Config struct {
	Environment parcela.Environment
	Clock       parcela.Clock // default: the system clock
	Logger      *slog.Logger
	// RateLimit is requests per second per token; 0 disables the limit.
	RateLimit float64
	// UnauthenticatedRateLimit is requests per second per client address
	// without a valid token (each costs a token lookup); 0: no limit.
	UnauthenticatedRateLimit float64
	// ImageRateLimit is requests per second per client address for the
	// public payment images; 0: no limit.
	ImageRateLimit float64
	// TrustedProxies are the ranges of proxies whose X-Forwarded-For names
	// the client address; without them, the TCP peer is the client.
	TrustedProxies []netip.Prefix
	// ImageCacheBytes bounds the cache of rendered payment images
	// (default 32 MiB; negative: no cache).
	ImageCacheBytes int64
	// PublicURL prefixes the offer, checkout and image addresses.
	PublicURL string
	// TokenCacheTTL bounds how long a token lookup is reused; a revoked
	// token stops working within this time. 0 disables the cache.
	TokenCacheTTL time.Duration
	Metrics       *Metrics
	// OpenAPI is the contract served at /openapi.yaml (without its
	// sandbox-only operations on production, and with PublicURL as its
	// server).
	OpenAPI []byte
}

// Server serves one environment's listener.
type Server struct {
	svc             Services
	env             parcela.Environment
	log             *slog.Logger
	perToken        *limiter
	unauthenticated *limiter
	imageLimit      *limiter
	trustedProxies  []netip.Prefix
	images          *imageCache
	tokens          *tokenCache
	publicURL       string
	metrics         *Metrics
	clock           parcela.Clock
	openAPI         []byte
	inFlight        inFlight
	outage          *throttledLog
}

// New builds the handler of one environment.
func New(svc Services, cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = parcela.SystemClock{}
	}
	s := &Server{
		svc:             svc,
		env:             cfg.Environment,
		log:             cfg.Logger,
		perToken:        newLimiter(string(cfg.Environment)+":token:", cfg.RateLimit, svc.RateCounter),
		unauthenticated: newLimiter(string(cfg.Environment)+":address:", cfg.UnauthenticatedRateLimit, svc.RateCounter),
		imageLimit:      newLimiter(string(cfg.Environment)+":image:", cfg.ImageRateLimit, svc.RateCounter),
		trustedProxies:  cfg.TrustedProxies,
		images:          newImageCache(cfg.ImageCacheBytes),
		tokens:          &tokenCache{tokens: svc.Tokens, env: cfg.Environment, ttl: cfg.TokenCacheTTL, entries: map[string]tokenEntry{}, known: map[string]time.Time{}},
		publicURL:       cfg.PublicURL,
		metrics:         cfg.Metrics,
		clock:           cfg.Clock,
		openAPI:         api.ForListener(cfg.OpenAPI, cfg.Environment == parcela.Sandbox, cfg.PublicURL),
		outage:          &throttledLog{clock: cfg.Clock, every: outageLogEvery},
	}
	mux := http.NewServeMux()
	s.routes(mux)
	return s.withPublicURL(s.base(mux))
}

// tokenCache saves a database round trip per request for a token seen in
// the last TTL; only successful lookups are cached, keyed by the token's
// hash so no secret sits in memory longer than its request.
type tokenCache struct {
	tokens  parcela.TokenService
	env     parcela.Environment // the listener's: only its tokens are known
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]tokenEntry
	// known holds, by hash, the tokens found valid in the last
	// knownTokenFor, and when: such a token is looked up even while its
	// client address has used its allowance of requests without a valid
	// token (an audit: one company's client looping on a revoked token
	// from a shared NAT address had another company's valid token refused
	// 429 each time its cache entry lapsed). A token's hash is no secret
	// an attacker can send, and a known token is still looked up, so
	// revocation works as before; a refused lookup forgets it.
	known map[string]time.Time
}

// knownTokenFor is how long a token found valid passes its address's
// allowance; maxCachedTokens bounds each map (reset when full).
const (
	knownTokenFor   = time.Hour
	maxCachedTokens = 10000
)

// known tells whether plain was found valid within knownTokenFor.
func (c *tokenCache) knownValid(plain string) bool {
	c.mu.Lock()
	at, ok := c.known[parcela.HashToken(plain)]
	c.mu.Unlock()
	return ok && time.Since(at) < knownTokenFor
}

type tokenEntry struct {
	token   *parcela.Token
	expires time.Time
}

// cached returns the token of plain if it was looked up within the TTL.
func (c *tokenCache) cached(plain string) (*parcela.Token, bool) {
	if c.ttl <= 0 {
		return nil, false
	}
	c.mu.Lock()
	e, ok := c.entries[parcela.HashToken(plain)]
	c.mu.Unlock()
	if !ok || !time.Now().Before(e.expires) {
		return nil, false
	}
	return e.token, true
}

// lookup authenticates plain and caches the token it finds.
func (c *tokenCache) lookup(ctx context.Context, plain string) (*parcela.Token, error) {
	t, err := c.tokens.Authenticate(ctx, plain)
	key, now := parcela.HashToken(plain), time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if parcela.ErrorCode(err) == parcela.EUNAUTHORIZED {
			delete(c.known, key)
		}
		return t, err
	}
	// Another environment's token is no valid token here, and counts
	// against its address like one (a review: known, it was looked up at
	// every request past the address's allowance).
	if t.Environment == c.env {
		if len(c.known) >= maxCachedTokens {
			c.known = map[string]time.Time{}
		}
		c.known[key] = now
	}
	if c.ttl > 0 {
		if len(c.entries) >= maxCachedTokens {
			c.entries = map[string]tokenEntry{}
		}
		c.entries[key] = tokenEntry{token: t, expires: now.Add(c.ttl)}
	}
	return t, nil
}

// detached keeps the request's values but not its cancellation, for
// bookkeeping that must finish after the client has gone.
func detached(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
}

// ServicesOf takes a Server's use cases from app, and its bookkeeping from
// store (the idempotency keys and the health check).
func ServicesOf(app *parcela.Services, store interface {
	IdempotencyStore
	Health
}) Services {
	return Services{Catalog: app.Catalog, Orders: app.Orders, Billings: app.Billings, Bills: app.Bills, Payments: app.Payments,
		Webhooks: app.Webhooks, Tokens: app.Tokens, Idempotency: store, Health: store}
}
