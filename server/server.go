// Package server is parcela's HTTP API: routes on one page (routes.go),
// authentication, problem+json errors and the handlers.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"parcela"
	"parcela/sqldb"
)

// Config is what a Server needs beyond the store.
type Config struct {
	Environment parcela.Environment
	Logger      *slog.Logger
	// RateLimit is requests per second per token; 0 disables the limit.
	RateLimit float64
	// PublicURL prefixes the offer, checkout and image addresses.
	PublicURL string
	// TokenCacheTTL bounds how long a token lookup is reused; a revoked
	// token stops working within this time. 0 disables the cache.
	TokenCacheTTL time.Duration
	Metrics       *Metrics
	// OpenAPI is the contract served at /openapi.yaml.
	OpenAPI []byte
}

// Server serves one environment's listener.
type Server struct {
	db        *sqldb.DB
	env       parcela.Environment
	log       *slog.Logger
	limits    *rateLimits
	tokens    *tokenCache
	publicURL string
	metrics   *Metrics
	clock     parcela.Clock
	openAPI   []byte
}

// New builds the handler of one environment.
func New(db *sqldb.DB, cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		db:        db,
		env:       cfg.Environment,
		log:       cfg.Logger,
		limits:    newRateLimits(cfg.RateLimit),
		tokens:    &tokenCache{db: db, ttl: cfg.TokenCacheTTL, entries: map[string]tokenEntry{}},
		publicURL: cfg.PublicURL,
		metrics:   cfg.Metrics,
		clock:     db.Clock,
		openAPI:   cfg.OpenAPI,
	}
	mux := http.NewServeMux()
	s.routes(mux)
	return s.base(mux)
}

// tokenCache saves a database round trip per request for a token seen in
// the last TTL; only successful lookups are cached.
type tokenCache struct {
	db      *sqldb.DB
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]tokenEntry
}

type tokenEntry struct {
	token   *parcela.Token
	expires time.Time
}

func (c *tokenCache) lookup(ctx context.Context, plain string) (*parcela.Token, error) {
	if c.ttl <= 0 {
		return c.db.Authenticate(ctx, plain)
	}
	key := sqldb.HashToken(plain)
	now := time.Now()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.token, nil
	}
	t, err := c.db.Authenticate(ctx, plain)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.entries) > 10000 {
		c.entries = map[string]tokenEntry{}
	}
	c.entries[key] = tokenEntry{token: t, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return t, nil
}

// detached keeps the request's values but not its cancellation, for
// bookkeeping that must finish after the client has gone.
func detached(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
}
