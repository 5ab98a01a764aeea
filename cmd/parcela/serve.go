package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"parcela"
	"parcela/api"
	"parcela/bank"
	"parcela/jobs"
	"parcela/server"
)

// serveConfig is read from the environment once, so nothing else reads it.
type serveConfig struct {
	addr, sandboxAddr, opsAddr string
	publicURL, sandboxURL      string
	rateLimit, sandboxLimit    float64
	tokenCacheTTL              time.Duration
	shutdownTimeout            time.Duration
	logLevel                   slog.Level
	allowedCIDRs               string
}

func readServeConfig(getenv func(string) string) (serveConfig, error) {
	c := serveConfig{
		addr:            envOr(getenv, "PARCELA_ADDR", "127.0.0.1:8080"),
		sandboxAddr:     envOr(getenv, "PARCELA_SANDBOX_ADDR", "127.0.0.1:8081"),
		opsAddr:         envOr(getenv, "PARCELA_OPS_ADDR", "127.0.0.1:9090"),
		publicURL:       strings.TrimRight(getenv("PARCELA_PUBLIC_URL"), "/"),
		sandboxURL:      strings.TrimRight(getenv("PARCELA_SANDBOX_PUBLIC_URL"), "/"),
		allowedCIDRs:    getenv("PARCELA_WEBHOOK_ALLOWED_CIDRS"),
		tokenCacheTTL:   2 * time.Second,
		shutdownTimeout: 20 * time.Second,
	}
	var err error
	if c.rateLimit, err = envFloat(getenv, "PARCELA_RATE_LIMIT", 100); err != nil {
		return c, err
	}
	if c.sandboxLimit, err = envFloat(getenv, "PARCELA_SANDBOX_RATE_LIMIT", 25); err != nil {
		return c, err
	}
	if s := getenv("PARCELA_TOKEN_CACHE_TTL"); s != "" {
		if c.tokenCacheTTL, err = time.ParseDuration(s); err != nil {
			return c, fmt.Errorf("PARCELA_TOKEN_CACHE_TTL: %q is not a duration", s)
		}
	}
	if s := getenv("PARCELA_SHUTDOWN_TIMEOUT"); s != "" {
		if c.shutdownTimeout, err = time.ParseDuration(s); err != nil {
			return c, fmt.Errorf("PARCELA_SHUTDOWN_TIMEOUT: %q is not a duration", s)
		}
	}
	if s := getenv("PARCELA_LOG_LEVEL"); s != "" {
		if err := c.logLevel.UnmarshalText([]byte(s)); err != nil {
			return c, fmt.Errorf("PARCELA_LOG_LEVEL: %q is not debug, info, warn or error", s)
		}
	}
	return c, nil
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

func envFloat(getenv func(string) string, name string, def float64) (float64, error) {
	s := getenv(name)
	if s == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative number of requests per second", name, s)
	}
	return f, nil
}

func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbFlag := newFlags("serve", stderr)
	demo := fs.Bool("demo", false, "create a demo company and sandbox token when the database has no company")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := readServeConfig(getenv)
	if err != nil {
		return usageError{err.Error()}
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	clock := parcela.SystemClock{}
	db, err := openDB(ctx, *dbFlag, getenv, clock)
	if err != nil {
		return err
	}
	defer db.Close()

	// Listen first so port 0 resolves before URLs are derived from it.
	lnProd, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen PARCELA_ADDR: %w", err)
	}
	lnSandbox, err := net.Listen("tcp", cfg.sandboxAddr)
	if err != nil {
		lnProd.Close()
		return fmt.Errorf("listen PARCELA_SANDBOX_ADDR: %w", err)
	}
	lnOps, err := net.Listen("tcp", cfg.opsAddr)
	if err != nil {
		lnProd.Close()
		lnSandbox.Close()
		return fmt.Errorf("listen PARCELA_OPS_ADDR: %w", err)
	}
	if cfg.publicURL == "" {
		cfg.publicURL = "http://" + lnProd.Addr().String()
	}
	if cfg.sandboxURL == "" {
		cfg.sandboxURL = "http://" + lnSandbox.Addr().String()
	}

	if *demo {
		n, err := db.CountCompanies(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			d, err := setUpDemo(ctx, db)
			if err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			printDemo(stdout, d, cfg.sandboxURL)
		} else {
			fmt.Fprintln(stdout, "demo: the database already has a company; nothing created (see 'parcela company list')")
		}
	}

	db.Links = map[parcela.Environment]parcela.Links{parcela.Production: {PublicURL: cfg.publicURL}, parcela.Sandbox: {PublicURL: cfg.sandboxURL}}
	db.Payments = bank.NewSimulated()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	queue, err := jobs.New(db, jobs.Config{Logger: log.With("component", "jobs"), WebhookAllowedCIDRs: cfg.allowedCIDRs, Metrics: reg})
	if err != nil {
		return usageError{err.Error()}
	}
	// Workers stop through Stop below, after the listeners drained; a
	// canceled Start context would cancel running jobs instead.
	if err := queue.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}

	metrics := server.NewMetrics(reg)
	prod := &http.Server{Handler: server.New(db, server.Config{Environment: parcela.Production, Logger: log, RateLimit: cfg.rateLimit,
		PublicURL: cfg.publicURL, TokenCacheTTL: cfg.tokenCacheTTL, Metrics: metrics, OpenAPI: api.Spec}), ReadHeaderTimeout: 10 * time.Second}
	sandbox := &http.Server{Handler: server.New(db, server.Config{Environment: parcela.Sandbox, Logger: log, RateLimit: cfg.sandboxLimit,
		PublicURL: cfg.sandboxURL, TokenCacheTTL: cfg.tokenCacheTTL, Metrics: metrics, OpenAPI: api.Spec}), ReadHeaderTimeout: 10 * time.Second}
	ops := &http.Server{Handler: opsHandler(reg), ReadHeaderTimeout: 10 * time.Second}

	errc := make(chan error, 3)
	for _, s := range []struct {
		srv *http.Server
		ln  net.Listener
	}{{prod, lnProd}, {sandbox, lnSandbox}, {ops, lnOps}} {
		go func() {
			if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	fmt.Fprintf(stdout, "production http://%s\nsandbox http://%s\noperations http://%s\n", lnProd.Addr(), lnSandbox.Addr(), lnOps.Addr())
	log.Info("serving", "production", lnProd.Addr().String(), "sandbox", lnSandbox.Addr().String(), "operations", lnOps.Addr().String(), "database", string(db.Dialect()))

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	log.Info("shutting down: draining requests")
	// Drain in-flight requests, then let running jobs finish.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.shutdownTimeout)
	defer cancel()
	for _, s := range []*http.Server{prod, sandbox, ops} {
		if err := s.Shutdown(shutdownCtx); err != nil {
			log.Error("shutdown", "error", err.Error())
		}
	}
	if err := queue.Stop(shutdownCtx); err != nil {
		// Jobs still running past the grace period are canceled; they stay
		// queued and run again after the next start.
		log.Warn("jobs still running at the shutdown deadline; canceling them", "error", err.Error())
		cancelCtx, done := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer done()
		if err := queue.StopAndCancel(cancelCtx); err != nil {
			log.Error("stop jobs", "error", err.Error())
		}
	}
	log.Info("stopped")
	return serveErr
}

func opsHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"status":"ok"}`) })
	return mux
}
