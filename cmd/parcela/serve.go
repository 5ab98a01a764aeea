package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"parcela"
	"parcela/api"
	"parcela/bank"
	"parcela/jobs"
	"parcela/server"
	"parcela/sqldb"
	"parcela/webhook"
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
	addresses                  *webhook.AddressPolicy // of allowedCIDRs
	productionProvider         string                 // "" (none) or "simulated"
	sqliteSynchronous          string                 // "full" or "normal"
	limits                     serveLimits
	pages                      pagesConfig
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
	for _, name := range []string{"PARCELA_PUBLIC_URL", "PARCELA_SANDBOX_PUBLIC_URL"} {
		if v := getenv(name); v != "" && strings.TrimRight(v, "/") == "" || v == "" && slices.Contains(environ(), name+"=") {
			// Set, but to nothing: a deployment whose secret did not reach
			// it, whose offer, checkout and image links (answered by the
			// API, stored, sent in webhooks) named the listener's own
			// address, 127.0.0.1 behind a proxy (an audit).
			// "/" too: "${PUBLIC_URL}/" with the secret missing (a review).
			return c, usageError{name + " is set but empty: give the public address, or unset it for the listener's own"}
		}
	}
	for name, u := range map[string]string{"PARCELA_PUBLIC_URL": c.publicURL, "PARCELA_SANDBOX_PUBLIC_URL": c.sandboxURL} {
		if err := checkPublicURL(u); err != nil {
			// Not quoted: a URL refused for its user may hold a password.
			return c, fmt.Errorf("%s: %w", name, err)
		}
	}
	if c.publicURL != "" && sameAddress(c.publicURL, c.sandboxURL) {
		// One address is one listener behind the proxy: every link of the
		// other environment (its offers, checkouts, images) would open a
		// page that is not there, or the wrong environment's docs.
		return c, errors.New("PARCELA_PUBLIC_URL and PARCELA_SANDBOX_PUBLIC_URL are the same address: each environment needs one of its own")
	}
	if c.rateLimit, err = envFloat(getenv, "PARCELA_RATE_LIMIT", 100); err != nil {
		return c, err
	}
	if c.sandboxLimit, err = envFloat(getenv, "PARCELA_SANDBOX_RATE_LIMIT", 25); err != nil {
		return c, err
	}
	// 0 is meant (no cache, no wait); a negative duration would act as 0
	// while saying something else. Each has a ceiling: a revoked token is
	// taken for as long as its lookup is kept (1000000h kept it for ever,
	// its revocation reported done), and a stop that may wait hours is no
	// stop an orchestrator can plan for.
	if s := getenv("PARCELA_TOKEN_CACHE_TTL"); s != "" {
		if c.tokenCacheTTL, err = time.ParseDuration(s); err != nil || c.tokenCacheTTL < 0 || c.tokenCacheTTL > maxTokenCacheTTL {
			return c, fmt.Errorf("PARCELA_TOKEN_CACHE_TTL: %q is not a duration from 0 to %s (a revoked token is taken until its lookup expires)", s, maxTokenCacheTTL)
		}
	}
	if s := getenv("PARCELA_SHUTDOWN_TIMEOUT"); s != "" {
		if c.shutdownTimeout, err = time.ParseDuration(s); err != nil || c.shutdownTimeout < 0 || c.shutdownTimeout > maxShutdownTimeout {
			return c, fmt.Errorf("PARCELA_SHUTDOWN_TIMEOUT: %q is not a duration from 0 to %s", s, maxShutdownTimeout)
		}
	}
	// The queue reads it again; refused here, before the database is
	// migrated or the demo created.
	if c.addresses, err = webhook.NewAddressPolicy(c.allowedCIDRs); err != nil {
		return c, fmt.Errorf("PARCELA_WEBHOOK_ALLOWED_CIDRS: %w", err)
	}
	switch c.productionProvider = getenv("PARCELA_PRODUCTION_PROVIDER"); c.productionProvider {
	case "", "simulated":
	default:
		return c, fmt.Errorf("PARCELA_PRODUCTION_PROVIDER: %q is not a known payment provider (the one built in is simulated)", c.productionProvider)
	}
	switch c.sqliteSynchronous = strings.ToLower(envOr(getenv, "PARCELA_SQLITE_SYNCHRONOUS", "full")); c.sqliteSynchronous {
	case "full", "normal":
	default:
		return c, fmt.Errorf("PARCELA_SQLITE_SYNCHRONOUS: %q is not full or normal (off is not offered: a power loss could corrupt the database)", getenv("PARCELA_SQLITE_SYNCHRONOUS"))
	}
	if c.limits, err = readServeLimits(getenv); err != nil {
		return c, err
	}
	if c.pages, err = readPagesConfig(getenv); err != nil {
		return c, err
	}
	if s := getenv("PARCELA_LOG_LEVEL"); s != "" {
		// The four names only: slog also reads "error+100", which
		// silenced every line without a word.
		switch strings.ToLower(s) {
		case "debug", "info", "warn", "error":
			_ = c.logLevel.UnmarshalText([]byte(s))
		default:
			return c, fmt.Errorf("PARCELA_LOG_LEVEL: %q is not debug, info, warn or error", s)
		}
	}
	return c, nil
}

// checkPublicURL accepts "" (the listener's own address) or an absolute
// http or https address, written as the links will carry it: every offer,
// checkout and image link is this prefix and a path, and the pages mark
// their cookies Secure by its scheme.
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil, !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://"):
		return errors.New("must be an address starting with http:// or https://")
	case u.Host == "" || u.Hostname() == "":
		return errors.New("must name a host")
	case !linkHost(u.Hostname()):
		// url.Parse takes any host: https://ex..com started, and every
		// link the API answered and stored named a host no browser opens.
		return errors.New("must name a host such as pay.example.com, or an IP address")
	case u.Port() != "" && !portInRange(u.Port()):
		// url.Parse takes any digits: :99999 made every link one no
		// browser opens.
		return errors.New("must have a port from 1 to 65535, or none")
	case u.User != nil, u.RawQuery != "", u.ForceQuery, u.Fragment != "", strings.Contains(s, "#"):
		return errors.New("takes no user, query or fragment: it is the prefix of links")
	case strings.Trim(u.EscapedPath(), "/") != "":
		// The pages, their assets and forms and the docs are served from
		// the root of the address: behind a prefix their links missed it.
		return errors.New("takes no path: parcela serves from the root of its address, so a proxy gives it a host of its own")
	case strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return errors.New("must hold no space or control character")
	}
	return nil
}

// linkHost tells whether a public URL's host is one a browser opens: an IP
// address without a zone, or names of letters, digits, '-' and '_' (a
// container's name) between dots, none empty or over 63 bytes, none
// beginning or ending with '-', 253 bytes in all. A name whose last label
// is all digits is read by browsers as an IPv4 address, so it must be one.
func linkHost(h string) bool {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Zone() == ""
	}
	if strings.Contains(h, ":") || len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' ||
			strings.ContainsFunc(l, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' }) {
			return false
		}
	}
	last := labels[len(labels)-1]
	return strings.ContainsFunc(last, func(r rune) bool { return r < '0' || r > '9' })
}

// sameAddress tells whether two public URLs checkPublicURL accepted are
// one address: the same scheme, host and port, a scheme's default port
// written or not (https://pay.example.com:443 is https://pay.example.com).
func sameAddress(a, b string) bool {
	origin := func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		scheme, port := strings.ToLower(u.Scheme), u.Port()
		if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			port = ""
		}
		return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
	}
	return origin(a) == origin(b)
}

// portInRange tells whether p, digits as url.Parse takes them, is a TCP port.
func portInRange(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// The ceilings of PARCELA_TOKEN_CACHE_TTL and PARCELA_SHUTDOWN_TIMEOUT.
const (
	maxTokenCacheTTL   = 5 * time.Minute
	maxShutdownTimeout = 10 * time.Minute
)

// The rates a limiter can count: its window (1/rate seconds, below one a
// second) and its count per second must fit in int64.
const (
	minRate = 0.00001 // one in 100,000 s, about 28 hours
	maxRate = 1e9
)

// envFloat reads a rate limit: 0 (none), or from minRate to maxRate a second.
func envFloat(getenv func(string) string, name string, def float64) (float64, error) {
	s := getenv(name)
	if s == "" {
		return def, nil
	}
	// ParseFloat takes NaN and Inf, which no comparison below refuses alone.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || (f != 0 && (f < minRate || f > maxRate)) {
		return 0, fmt.Errorf("%s: %q is not a number of requests per second: 0 (no limit) or from 0.00001 to 1000000000", name, s)
	}
	if !keptRate(f) {
		return 0, fmt.Errorf("%s: %q is a rate the limits cannot keep: a whole number of requests per second, or below 1 one request every whole number of seconds (0.5, 0.25, 0.1)", name, s)
	}
	return f, nil
}

// keptRate tells whether the limiters keep rate as it is: they count a
// whole number of requests a second, or one request every whole number of
// seconds below one a second (1/rate, rounded up). 1.5 would be kept as 1,
// 0.3 as one every 4 s.
func keptRate(rate float64) bool {
	if rate == 0 || rate >= 1 {
		return rate == math.Trunc(rate)
	}
	every := math.Ceil(1 / rate) // as the limiters round it
	return math.Abs(every*rate-1) < 1e-9
}

// storeFault is nil in the binary. The crash tests' child process sets it
// to kill itself between the steps of an idempotent request.
var storeFault func(context.Context, sqldb.FaultPoint)

// demoCounted is nil in the binary. A test sets it to hold starts that
// found no company until all of them did, as starts at one moment can.
var demoCounted func()

func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	err := serve(ctx, args, getenv, stdout, stderr)
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// Stopped while starting (migrating, making the demo): a stop, as
		// one once serving is, not a failure an orchestrator restarts for
		// (an audit).
		slog.New(slog.NewJSONHandler(stderr, nil)).Info("stopped before serving")
		return nil
	}
	return err
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbFlag := newFlags("serve", stderr)
	demo := fs.Bool("demo", false, "create a demo company and sandbox token when the database has no company")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := readServeConfig(getenv)
	if err != nil {
		return usageError{err.Error()}
	}
	tuneGC(getenv)
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	for _, u := range unknownVariables(environ()) {
		if u[1] != "" {
			log.Warn(u[0]+" is not a variable parcela reads: it has no effect; did you mean "+u[1]+"?", "variable", u[0], "near", u[1])
		} else {
			log.Warn(u[0]+" is not a variable parcela reads: it has no effect", "variable", u[0])
		}
	}
	clock := parcela.SystemClock{}
	enq, err := jobs.NewEnqueuer(jobs.DeliveryQueue)
	if err != nil {
		return err
	}
	// One process serves a SQLite file (PostgreSQL's instances share their
	// limits through it): taken first, so a second start on the file says
	// so rather than that its ports are in use, and held until the return.
	dsn, err := databaseAddress(*dbFlag, getenv)
	if err != nil {
		return err
	}
	release, err := sqldb.LockServe(dsn)
	if err != nil {
		return err
	}
	defer release()
	// Listen first so port 0 resolves before URLs are derived from it, and
	// so that an address refused (malformed, or in use) stops the start
	// before the database is migrated. Connections wait in the backlog
	// until the listeners serve.
	lnProd, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen PARCELA_ADDR: %w", err)
	}
	defer lnProd.Close()
	lnSandbox, err := net.Listen("tcp", cfg.sandboxAddr)
	if err != nil {
		return fmt.Errorf("listen PARCELA_SANDBOX_ADDR: %w", err)
	}
	defer lnSandbox.Close()
	lnOps, err := net.Listen("tcp", cfg.opsAddr)
	if err != nil {
		return fmt.Errorf("listen PARCELA_OPS_ADDR: %w", err)
	}
	defer lnOps.Close()
	if sameAddress(cmp.Or(cfg.publicURL, "http://"+lnProd.Addr().String()), cmp.Or(cfg.sandboxURL, "http://"+lnSandbox.Addr().String())) {
		// One set, the other left to its listener's address, and the set
		// one naming that listener: every link of one environment opened
		// the other's 404 (an audit); two set alike are refused above.
		return usageError{"PARCELA_PUBLIC_URL or PARCELA_SANDBOX_PUBLIC_URL names the other environment's listener: each environment needs an address of its own"}
	}
	for _, w := range allowedCIDRsWarnings(cfg.allowedCIDRs) {
		log.Warn(w, "variable", "PARCELA_WEBHOOK_ALLOWED_CIDRS")
	}
	if w := opsExposed(lnOps.Addr()); w != "" {
		log.Warn(w, "operations", lnOps.Addr().String())
	}
	if w := trustsEveryAddress(cfg.limits.trustedProxies); w != "" {
		log.Warn(w)
	}

	db, err := openDB(ctx, dsn, getenv, sqldb.Config{Clock: clock, Enqueuer: enq, Fault: storeFault, SQLiteSynchronous: cfg.sqliteSynchronous})
	if err != nil {
		return err
	}
	var closeBy time.Time // set when the shutdown begins
	defer func() { closeWithin(db, closeBy, log) }()
	if cfg.sqliteSynchronous == "normal" {
		if db.Dialect() == sqldb.SQLite {
			log.Warn("PARCELA_SQLITE_SYNCHRONOUS=normal: SQLite syncs its log at checkpoints only, so writes answered 2xx in the last moments " +
				"before a power loss of the machine (not a crash of the process) can be lost; the database is never corrupted")
		} else {
			log.Warn("PARCELA_SQLITE_SYNCHRONOUS has no effect on PostgreSQL (its synchronous_commit is the database's setting)")
		}
	}
	if n := db.PoolRaisedFrom(); n > 0 {
		// Said, not refused: an address that started before keeps
		// starting, and the operator learns the database must allow more.
		log.Warn(fmt.Sprintf("pool_max_conns=%d in the database address is below the 16 connections parcela keeps per instance: the pool has 16, "+
			"so the database must allow 16 for each instance (max_connections, or a pooler's limit)", n), "pool_max_conns", n, "pool", 16)
	}
	unreachable := map[string]string{} // variable: the links it leaves naming the listener
	if cfg.publicURL == "" {
		cfg.publicURL = "http://" + lnProd.Addr().String()
		if !loopback(lnProd) {
			unreachable["PARCELA_PUBLIC_URL"] = cfg.publicURL
		}
	}
	if cfg.sandboxURL == "" {
		cfg.sandboxURL = "http://" + lnSandbox.Addr().String()
		if !loopback(lnSandbox) {
			unreachable["PARCELA_SANDBOX_PUBLIC_URL"] = cfg.sandboxURL
		}
	}

	if *demo {
		n, err := db.CountCompanies(ctx)
		if err != nil {
			return err
		}
		var d *demoSetup
		if n == 0 && demoCounted != nil {
			demoCounted()
		}
		if n == 0 {
			// Another start may create it first (errDemoTaken), as if it
			// had been there.
			if d, err = setUpDemo(ctx, db); err != nil && !errors.Is(err, errDemoTaken) {
				return fmt.Errorf("demo: %w", err)
			}
		}
		if d != nil {
			printDemo(stdout, d, cfg.sandboxURL)
		} else {
			fmt.Fprintln(stdout, "demo: the database already has a company; nothing created (see 'parcela company list')")
		}
	}

	links := parcela.LinksByEnvironment{parcela.Production: {PublicURL: cfg.publicURL}, parcela.Sandbox: {PublicURL: cfg.sandboxURL}}
	app := parcela.NewServices(db, paymentProviders(cfg, log), cardAcquirers(cfg), clock, links)
	// The check of a webhook's URL knows the listeners too, as the
	// delivery's does: a URL at one was accepted (201) and every delivery
	// refused, where the contract answers 422 on url (an audit).
	cfg.addresses.RefuseOwn(listenerAddrs(lnProd, lnSandbox, lnOps), webhook.InterfaceAddrs())
	app.Webhooks.RefuseAddresses(cfg.addresses)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerCheckpointMetrics(reg, db)
	registerReadGateMetrics(reg, db)
	queue, err := jobs.New(db, enq, jobs.App{Sweeps: app.Sweeps, Deliveries: app.Deliveries, Upkeep: db, Provider: app.Provider},
		jobs.Config{Logger: slog.New(newThrottledHandler(log.Handler(), 10*time.Second)).With("component", "jobs"), Clock: clock, WebhookAllowedCIDRs: cfg.allowedCIDRs, Metrics: reg,
			OwnListeners: listenerAddrs(lnProd, lnSandbox, lnOps)})
	if err != nil {
		return usageError{err.Error()}
	}
	// Workers stop through Stop below, after the listeners drained; a
	// canceled Start context would cancel running jobs instead.
	if err := queue.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}

	metrics := server.NewMetrics(reg)
	svc := server.ServicesOf(app, db)
	if db.Dialect() == sqldb.Postgres {
		// Instances on one database share their rate limits; SQLite has one.
		svc.RateCounter = db
	}
	lim := cfg.limits
	listenerConfig := func(env parcela.Environment, rate float64, publicURL string) server.Config {
		return server.Config{Environment: env, Clock: clock, Logger: log, RateLimit: rate, UnauthenticatedRateLimit: lim.unauthenticatedRate,
			ImageRateLimit: lim.imageRate, TrustedProxies: lim.trustedProxies, ImageCacheBytes: lim.imageCacheBytes,
			PublicURL: publicURL, TokenCacheTTL: cfg.tokenCacheTTL, Metrics: metrics, OpenAPI: api.Spec}
	}
	for name, u := range unreachable {
		// Served beyond this machine, the listener's own address (0.0.0.0,
		// [::], an internal one) is no address a customer can open.
		log.Warn(name+" is not set: the offer, checkout and payment links the API answers and stores name "+u+
			", the listener's own address; set it to the address customers reach", "variable", name, "links", u)
	}
	if cfg.pages.random {
		log.Warn("PARCELA_PAGES_SECRET is not set: the payer pages' form tokens use a secret drawn at this start, so forms " +
			"shown before a restart are answered with a fresh form, and instances behind one address need the variable set to the same value")
	}
	listener := func(env parcela.Environment, rate float64, publicURL string) *http.Server {
		apiHandler := server.New(svc, listenerConfig(env, rate, publicURL))
		return server.NewHTTPServer(withPages(apiHandler, app, env, links.Links(env), clock, cfg.pages, lim, svc.RateCounter, log, metrics), lim.listener, log)
	}
	prod := listener(parcela.Production, cfg.rateLimit, cfg.publicURL)
	sandbox := listener(parcela.Sandbox, cfg.sandboxLimit, cfg.sandboxURL)
	ops := server.NewHTTPServer(opsHandler(reg), lim.listener, log)
	// Requests are canceled when the shutdown timeout ends: Shutdown only
	// stops waiting for them, and one still waiting on the database (a row
	// lock, a slow query) would hold its connection, and the pool's Close
	// with it, past any bound.
	requests, cancelRequests := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelRequests(server.ErrShuttingDown)
	// running counts the requests being served, so the stop warns of
	// requests cut short only when there were some: Shutdown answers a
	// deadline already past (PARCELA_SHUTDOWN_TIMEOUT=0) whenever a
	// connection has not yet gone idle, a keep-alive one just answered too.
	var running atomic.Int64
	for _, s := range []*http.Server{prod, sandbox, ops} {
		s.BaseContext = func(net.Listener) context.Context { return requests }
		h := s.Handler
		s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			running.Add(1)
			defer running.Add(-1)
			h.ServeHTTP(w, r)
		})
	}

	errc := make(chan error, 3)
	for _, s := range []struct {
		srv *http.Server
		ln  net.Listener
	}{{prod, lnProd}, {sandbox, lnSandbox}, {ops, lnOps}} {
		go func() {
			if err := s.srv.Serve(server.LimitListener(s.ln, lim.listener, lim.trustedProxies)); err != nil && !errors.Is(err, http.ErrServerClosed) {
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
	// The stop's bound: the grace period, and 10 s for canceled jobs to
	// return (README), the database's connections closed within it.
	closeBy = time.Now().Add(cfg.shutdownTimeout + 10*time.Second)
	// Drain in-flight requests, then let running jobs finish.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.shutdownTimeout)
	defer cancel()
	// All at once: a listener shut after another drained would take new
	// requests meanwhile, and leave them less of the grace period.
	var drained sync.WaitGroup
	var cutShort atomic.Bool // a listener still had requests at the deadline
	for _, s := range []*http.Server{prod, sandbox, ops} {
		drained.Go(func() {
			if err := s.Shutdown(shutdownCtx); errors.Is(err, context.DeadlineExceeded) {
				cutShort.Store(true)
			} else if err != nil {
				log.Error("shutdown", "error", err.Error())
			}
		})
	}
	drained.Wait()
	// Shutdown's own answer, not the deadline's: at PARCELA_SHUTDOWN_TIMEOUT=0
	// the deadline has always passed, and an idle server warned of
	// requests it did not have.
	if cutShort.Load() && running.Load() > 0 {
		log.Warn("requests still running at the shutdown deadline; canceling them")
	}
	cancelRequests(server.ErrShuttingDown) // answered 503, to retry
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

// paymentProviders gives the sandbox the simulated bank, and production
// the provider the operator configured, if any: the simulated bank's codes
// are not payable at any bank, so production gets it only on request.
func paymentProviders(cfg serveConfig, log *slog.Logger) parcela.ProvidersByEnvironment {
	simulated := bank.NewSimulated()
	p := parcela.ProvidersByEnvironment{parcela.Sandbox: simulated}
	switch cfg.productionProvider {
	case "simulated":
		p[parcela.Production] = simulated
		log.Warn("production issues payments on the simulated bank (PARCELA_PRODUCTION_PROVIDER=simulated): no bank pays its codes")
	default:
		log.Warn("production has no payment provider: its charges and payment issues answer 503 unavailable; " +
			"set PARCELA_PRODUCTION_PROVIDER to configure one")
	}
	return p
}

// cardAcquirers gives the sandbox the simulated acquirer, which approves
// test cards; production gets it only with the simulated bank
// (PARCELA_PRODUCTION_PROVIDER=simulated), and otherwise takes no card.
func cardAcquirers(cfg serveConfig) parcela.AcquirersByEnvironment {
	a := parcela.AcquirersByEnvironment{parcela.Sandbox: bank.SimulatedAcquirer{}}
	if cfg.productionProvider == "simulated" {
		a[parcela.Production] = bank.SimulatedAcquirer{}
	}
	return a
}

func opsHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	// Not pprof.Cmdline: the command line can hold --database with its
	// password, and this listener is the metrics scrapers'.
	mux.HandleFunc("/debug/pprof/cmdline", http.NotFound)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"status":"ok"}`) })
	return mux
}

// loopback tells whether ln listens on a loopback address only: a server
// for this machine alone, whose own address is the one its links can name.
func loopback(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// opsExposed is the warning for an operations listener bound beyond the
// loopback ("" when it is not): its profiles and goroutine dumps show
// whatever requests hold in memory, tokens and payers' data among them,
// to anyone who reaches the address, and nothing there asks for a token.
func opsExposed(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsLoopback() {
		return ""
	}
	return "PARCELA_OPS_ADDR listens beyond the loopback: /metrics and /debug/pprof/ (profiles and goroutine dumps, which can show tokens and payers' data) answer anyone who reaches it, without a token; keep it behind a firewall or on 127.0.0.1"
}

// trustsEveryAddress is the warning for PARCELA_TRUSTED_PROXIES holding a
// prefix of every address (0.0.0.0/0, ::/0), "" otherwise: any client then
// names its own address in X-Forwarded-For, and the per-address limits of
// the pages and of tokenless requests count whatever it writes.
func trustsEveryAddress(proxies []netip.Prefix) string {
	for _, p := range proxies {
		if p.Bits() == 0 {
			return "PARCELA_TRUSTED_PROXIES holds " + p.String() + ", every address: any client can name its own address in X-Forwarded-For and escape the per-address limits; list the proxies' own addresses"
		}
	}
	return ""
}

// listenerAddrs are the addresses lns listen on.
func listenerAddrs(lns ...net.Listener) []netip.AddrPort {
	var out []netip.AddrPort
	for _, ln := range lns {
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			out = append(out, a.AddrPort())
		}
	}
	return out
}

// allowedCIDRsWarnings names the ranges PARCELA_WEBHOOK_ALLOWED_CIDRS opens
// that no deployment means to: every address (a /0), or the cloud's
// metadata endpoint, which any company's webhook would then reach. Such a
// setting started without a word, where PARCELA_TRUSTED_PROXIES of a /0
// is warned of (an audit).
func allowedCIDRsWarnings(cidrs string) []string {
	metadata := netip.MustParseAddr("169.254.169.254")
	var out []string
	for _, field := range strings.Split(cidrs, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(field))
		switch {
		case err != nil:
		case p.Bits() == 0:
			out = append(out, "PARCELA_WEBHOOK_ALLOWED_CIDRS opens every address ("+p.String()+") to webhooks: any company's webhook reaches this machine's and its network's private services")
		case p.Contains(metadata) || p.Contains(netip.AddrFrom16(metadata.As16())):
			out = append(out, "PARCELA_WEBHOOK_ALLOWED_CIDRS opens the cloud metadata endpoint (169.254.169.254) to webhooks: any company's webhook can read it")
		}
	}
	return out
}

// closeWithin closes db, waiting for it until by (at least a second; with
// no bound, 10 s): a PostgreSQL that stopped answering held the pool's
// close on connections canceled jobs still held, 15 s each in pgx, and a
// stop at PARCELA_SHUTDOWN_TIMEOUT=1s took 25 s, past an orchestrator's
// grace period (an audit). Left open, they end with the process; SQLite's
// log keeps every commit either way.
func closeWithin(db *sqldb.DB, by time.Time, log *slog.Logger) {
	wait := 10 * time.Second
	if !by.IsZero() {
		wait = max(time.Until(by), time.Second)
	}
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			log.Error("close the database", "error", err.Error())
		}
	case <-t.C:
		log.Warn("the database's connections did not close in time; stopping without them", "waited", wait.String())
	}
}
