package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"parcela"
	"parcela/sqldb"
)

// Scenario names, as they appear in the report.
const (
	scGet    = "GET /bills/{id}"
	scList   = "GET /bills?status&due_date range, per_page=100"
	scCharge = "POST /orders + POST /orders/{id}/charge (financed, 12 bills)"
	// The payer's pages, served by the same binary on the sandbox listener.
	scOfferPage    = "GET /pay/{company_slug}/offers/{offer_id} (offer page)"
	scCheckoutPage = "GET /checkout/bills/{id}?code= (bill checkout page)"
	scChargeAlone  = "POST /orders + charge, one connection (no contention)"
	scWAL          = "POST /orders + charge, sustained (SQLite WAL sampled)"
	listPage       = 100
)

type bench struct {
	cfg          *config
	bin, tmp     string
	logf         func(string, ...any)
	report       *Report
	baselineDone bool
}

// engineTarget makes empty databases of one engine.
type engineTarget struct {
	name string
	// create returns the URL of a database for label and how to remove it.
	create func(ctx context.Context, label string, main bool) (dsn string, cleanup func(), err error)
}

func sqliteTarget(cfg *config, tmp string) engineTarget {
	return engineTarget{name: "sqlite", create: func(ctx context.Context, label string, main bool) (string, func(), error) {
		if main && cfg.database != "" {
			if _, err := os.Stat(cfg.database); err == nil && !cfg.reuse {
				return "", nil, fmt.Errorf("%s exists; pass --reuse to reuse it or remove it", cfg.database)
			}
			return "sqlite:" + cfg.database, func() {}, nil
		}
		path := filepath.Join(tmp, label+".db")
		return "sqlite:" + path, func() {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(path + suffix)
			}
		}, nil
	}}
}

func postgresTarget(cfg *config) engineTarget {
	return engineTarget{name: "postgres", create: func(ctx context.Context, label string, main bool) (string, func(), error) {
		u, err := url.Parse(cfg.postgres)
		if err != nil {
			return "", nil, err
		}
		name := fmt.Sprintf("parcela_bench_%s_%d", label, time.Now().UnixNano()%1e9)
		admin := func(q string) error {
			db, err := sqldb.Open(context.WithoutCancel(ctx), cfg.postgres, sqldb.Config{})
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.SQLDB().ExecContext(context.WithoutCancel(ctx), q)
			return err
		}
		if err := admin("CREATE DATABASE " + name); err != nil {
			return "", nil, fmt.Errorf("create database: %w", err)
		}
		u.Path = "/" + name
		return u.String(), func() { _ = admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") }, nil
	}}
}

// sqlitePath is the file of a "sqlite:PATH" database, "" for any other.
func sqlitePath(dsn string) string {
	if p, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		return p
	}
	return ""
}

// runEngine seeds the main database, measures every scenario on it, then
// the listing at the growth scales.
func (b *bench) runEngine(ctx context.Context, e engineTarget) (*EngineReport, error) {
	cfg := b.cfg
	er := &EngineReport{Engine: e.name}
	dsn, cleanup, err := e.create(ctx, "main", true)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	b.logf("%s: seeding %d bills", e.name, cfg.scale)
	s, err := seed(ctx, dsn, cfg.scale, cfg.companies, cfg.reuse, b.logf)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	er.Seed = s.SeedReport
	b.logf("%s: seeded %d bills, %d payments in %.1f s", e.name, s.Bills, s.Payments, s.Seconds)
	if cfg.against != "" {
		er.Alternations, err = b.alternate(ctx, e, dsn, s)
		return er, err
	}

	srv, err := startParcela(ctx, b.bin, dsn, b.cfg.rateLimit)
	if err != nil {
		return er, err
	}
	defer func() { _ = srv.stop() }()
	srv.engine = e.name
	srv.sqlitePath = sqlitePath(dsn)
	settled, err := settle(ctx, srv.pid(), 2*time.Minute)
	if err != nil {
		return er, err
	}
	er.SettleSeconds = settled.Seconds()
	b.logf("%s: server up, idle after %.1f s (start-up sweeps)", e.name, settled.Seconds())

	if !b.baselineDone && (cfg.runs("get") || cfg.runs("list") || cfg.runs("offer-page") || cfg.runs("checkout-page")) {
		if err := b.runBaseline(ctx, srv, s); err != nil {
			return er, fmt.Errorf("baseline: %w", err)
		}
		b.baselineDone = true
	}
	run := func(sc scenario) Result {
		b.logf("%s: %s, %d connections", e.name, sc.name, sc.conns)
		r := b.measure(ctx, srv, sc)
		logResult(b.logf, e.name, r)
		return r
	}
	var listed *Result
	if cfg.runs("get") {
		er.Scenarios = append(er.Scenarios, run(scenario{name: scGet, conns: cfg.getConns, op: getOp(srv.sandbox, s.token, s.billIDs)}))
	}
	if cfg.runs("list") {
		r := run(scenario{name: scList, conns: cfg.listConns, op: listOp(srv.sandbox, s.token, s.now)})
		cpuPerBill(&r)
		er.Scenarios, listed = append(er.Scenarios, r), &r
	}
	if cfg.runs("offer-page") {
		er.Scenarios = append(er.Scenarios, b.page(ctx, srv, scOfferPage, offerPageURLs(srv.sandbox, s)))
	}
	if cfg.runs("checkout-page") {
		er.Scenarios = append(er.Scenarios, b.page(ctx, srv, scCheckoutPage, checkoutPageURLs(srv.sandbox, s)))
	}
	if cfg.runs("charge") {
		charge := chargeOp(srv.sandbox, s.token, s.offerID, s.financedID)
		er.Scenarios = append(er.Scenarios, run(scenario{name: scCharge, conns: cfg.chargeConns, op: charge, writes: true}))
		// Alone, a charge's writer time is its own work; under load it
		// also holds the writer while waiting for a core.
		if cfg.chargeConns > 1 {
			er.Scenarios = append(er.Scenarios, run(scenario{name: scChargeAlone, conns: 1, op: charge, writes: true}))
		}
	}
	if cfg.runs("wal") {
		er.Scenarios = append(er.Scenarios, b.wal(ctx, srv, s))
	}
	// Last: its webhooks make every later charge fan out.
	if cfg.runs("webhooks") {
		er.Scenarios = append(er.Scenarios, b.webhooks(ctx, srv, s)...)
	}
	if err := ctx.Err(); err != nil {
		return er, err
	}
	if err := srv.stop(); err != nil {
		return er, fmt.Errorf("parcela serve exited with %v\n%s", err, srv.stderr.String())
	}
	if listed == nil {
		return er, nil
	}
	er.Growth = append(er.Growth, GrowthPoint{Bills: s.Bills, SeedSeconds: s.Seconds, Result: *listed})

	// The listing at the other scales, each on its own database and server.
	scales := slices.Clone(cfg.growth)
	slices.Sort(scales)
	for _, n := range slices.Compact(scales) {
		if n == cfg.scale || n < 24 {
			continue
		}
		p, err := b.growthPoint(ctx, e, n)
		if err != nil {
			return er, fmt.Errorf("listing at %d bills: %w", n, err)
		}
		er.Growth = append(er.Growth, *p)
	}
	slices.SortFunc(er.Growth, func(a, b GrowthPoint) int { return a.Bills - b.Bills })
	return er, nil
}

func (b *bench) growthPoint(ctx context.Context, e engineTarget, n int) (*GrowthPoint, error) {
	dsn, cleanup, err := e.create(ctx, "growth"+strconv.Itoa(n), false)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	b.logf("%s: seeding %d bills for the listing's growth", e.name, n)
	s, err := seed(ctx, dsn, n, b.cfg.companies, false, b.logf)
	if err != nil {
		return nil, err
	}
	srv, err := startParcela(ctx, b.bin, dsn, b.cfg.rateLimit)
	if err != nil {
		return nil, err
	}
	defer func() { _ = srv.stop() }()
	srv.engine = e.name
	srv.sqlitePath = sqlitePath(dsn)
	if _, err := settle(ctx, srv.pid(), 2*time.Minute); err != nil {
		return nil, err
	}
	r := b.measure(ctx, srv, scenario{name: scList + " @" + strconv.Itoa(s.Bills), conns: b.cfg.listConns, op: listOp(srv.sandbox, s.token, s.now)})
	r.Name = scList
	cpuPerBill(&r)
	b.logf("%s:   %d bills: %.0f req/s, p50 %.2f ms, p99 %.2f ms, %d errors, server CPU %.0f µs/page, %.1f µs/bill", e.name, s.Bills,
		r.RPS, r.P50ms, r.P99ms, r.Errors, r.ServerCPUPerOpUS, r.Extra["server_cpu_us_per_bill"])
	if err := srv.stop(); err != nil {
		return nil, fmt.Errorf("parcela serve exited with %v\n%s", err, srv.stderr.String())
	}
	return &GrowthPoint{Bills: s.Bills, SeedSeconds: s.Seconds, Result: r}, nil
}

// scenario is one closed-loop run against the server.
type scenario struct {
	name     string
	conns    int
	op       op
	duration time.Duration // 0: --duration
	// writes: the scenario writes, so on SQLite its writer is probed.
	writes bool
}

// measure runs sc against srv, with the server's CPU over the window, its
// peak RSS, the SQLite writer's share when sc writes, and, when asked, a
// CPU profile of the window.
func (b *bench) measure(ctx context.Context, srv *parcelaServer, sc scenario) Result {
	resetPeakRSS(srv.pid())
	spec := loadSpec{conns: sc.conns, warmup: b.cfg.warmup, duration: cmp.Or(sc.duration, b.cfg.duration), op: sc.op, pid: srv.pid(), dbComm: srv.dbComm}
	if sc.writes {
		p, err := startWriterProbe(srv.sqlitePath)
		if err != nil {
			b.logf("%s: no SQLite writer probe: %v", sc.name, err)
		}
		defer p.stop()
		spec.probe = p
	}
	var wg sync.WaitGroup
	if b.cfg.profileDir != "" {
		secs := max(1, min(5, int(spec.duration.Seconds())-1))
		path := filepath.Join(b.cfg.profileDir, profileName(srv.engine, sc.name))
		spec.onMeasure = func() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := cpuProfile(ctx, srv.ops, secs, path); err != nil {
					b.logf("profile %s: %v", path, err)
				}
			}()
		}
	}
	r := runLoad(ctx, sc.name, spec)
	wg.Wait()
	r.PeakRSSMB = peakRSS(srv.pid())
	return r
}

// logResult logs a scenario's main numbers.
func logResult(logf func(string, ...any), engine string, r Result) {
	if !r.Available {
		logf("%s:   %s", engine, r.Note)
		return
	}
	writer := ""
	if r.Writer != nil {
		writer = fmt.Sprintf(", SQLite writer busy %.0f%% (%.0f µs/op)", r.Writer.BusyPercent, r.Writer.HeldPerOpUS)
	}
	logf("%s:   %.0f req/s, p50 %.2f ms, p99 %.2f ms, %d errors, peak RSS %.0f MB, server CPU %.0f%% (%.0f µs/op)%s",
		engine, r.RPS, r.P50ms, r.P99ms, r.Errors, r.PeakRSSMB, r.ServerCPU, r.ServerCPUPerOpUS, writer)
}

// cpuPerBill adds a listing's server CPU per bill returned.
func cpuPerBill(r *Result) {
	if n := r.Extra["bills"]; n > 0 && r.ServerCPUSeconds > 0 {
		r.Extra["server_cpu_us_per_bill"] = r.ServerCPUSeconds * 1e6 / n
	}
}

func profileName(engine, scenario string) string {
	var out []byte
	for _, c := range []byte(engine + "-" + scenario) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			out = append(out, c)
		case len(out) > 0 && out[len(out)-1] != '_':
			out = append(out, '_')
		}
	}
	return string(bytes.TrimRight(out, "_")) + ".pb.gz"
}

// runBaseline measures the bare handler at every connection count the
// scenarios use, with a real bill as its body.
func (b *bench) runBaseline(ctx context.Context, srv *parcelaServer, s *seeded) error {
	w := &worker{client: newClient()}
	defer w.client.CloseIdleConnections()
	body, err := w.do(ctx, "GET", srv.sandbox+"/external_api/v1/bills/"+s.billIDs[0], s.token, nil, 200)
	if err != nil {
		return err
	}
	path := filepath.Join(b.tmp, "bill.json")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return err
	}
	c, addr, err := startBaseline(ctx, path)
	if err != nil {
		return err
	}
	defer func() { _ = c.stop() }()
	conns := []int{b.cfg.getConns, b.cfg.listConns, b.cfg.chargeConns, b.cfg.pageConns}
	slices.Sort(conns)
	for _, n := range slices.Compact(conns) {
		b.logf("baseline: bare net/http, %d-byte body, %d connections", len(body), n)
		r := runLoad(ctx, "baseline", loadSpec{conns: n, warmup: b.cfg.warmup, duration: b.cfg.duration, op: baselineOp(addr+"/bill", s.token), pid: c.pid()})
		r.PeakRSSMB = peakRSS(c.pid())
		r.Extra = map[string]float64{"body_bytes": float64(len(body))}
		b.logf("baseline:   %.0f req/s, p50 %.2f ms, p99 %.2f ms", r.RPS, r.P50ms, r.P99ms)
		b.report.Baseline = append(b.report.Baseline, r)
	}
	return c.stop()
}

func getOp(base, token string, ids []string) op {
	prefix := base + "/external_api/v1/bills/"
	return func(ctx context.Context, w *worker) (time.Duration, error) {
		id := ids[w.rng.IntN(len(ids))]
		t0 := time.Now()
		_, err := w.do(ctx, "GET", prefix+id, token, nil, 200)
		return time.Since(t0), err
	}
}

// listOp lists one status over a varying due-date window that matches many
// bills: paid over 60 days in the past 14 months (70%), or pending over 30
// days in the next 4 months. It counts full pages.
func listOp(base, token string, now time.Time) op {
	now = now.In(parcela.SaoPaulo)
	return func(ctx context.Context, w *worker) (time.Duration, error) {
		status, from, days := "paid", now.AddDate(0, 0, -(60+w.rng.IntN(360))), 60
		if w.rng.IntN(10) >= 7 {
			status, from, days = "pending", now.AddDate(0, 0, w.rng.IntN(90)), 30
		}
		u := fmt.Sprintf("%s/external_api/v1/bills?status=%s&due_date_start=%s&due_date_end=%s&per_page=%d",
			base, status, from.Format(time.DateOnly), from.AddDate(0, 0, days-1).Format(time.DateOnly), listPage)
		t0 := time.Now()
		body, err := w.do(ctx, "GET", u, token, nil, 200)
		d := time.Since(t0)
		if err != nil {
			return d, err
		}
		w.count("pages", 1)
		w.count("bills", int64(bytes.Count(body, billKey)))
		if totalItems(body) >= listPage {
			w.count("full_pages", 1)
		}
		return d, nil
	}
}

// billKey occurs once in every bill of a page (and nowhere else in it).
var billKey = []byte(`"bill_type"`)

// totalItems reads "total_items" from a page without decoding it.
func totalItems(body []byte) int {
	i := bytes.LastIndex(body, []byte(`"total_items":`))
	if i < 0 {
		return -1
	}
	rest := body[i+len(`"total_items":`):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, _ := strconv.Atoi(string(rest[:j]))
	return n
}

// chargeOp creates an order and charges it financed in 12 bills with a Pix
// down payment. The charge's latency is the scenario's; the order's is
// recorded as the second latency.
func chargeOp(base, token, offerID, financedID string) op {
	order := fmt.Appendf(nil, `{"order": {"offer_id": %q, "customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17",
		"customer_document": "529.982.247-25", "email": "maria@example.com", "phone": "(11) 98765-4321",
		"address": {"zipcode": "01310-100", "street": "Avenida Paulista", "number": "1000", "complement": "Apto 12",
		"neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`, offerID)
	charge := fmt.Appendf(nil, `{"payment_configuration_id": %q, "due_day": 10, "installments": 12, "payment": {"payment_method": "pix"},
		"signature": {"remote_ip": "203.0.113.7", "user_agent": "Mozilla/5.0 (X11; Linux x86_64)"}}`, financedID)
	return func(ctx context.Context, w *worker) (time.Duration, error) {
		t0 := time.Now()
		body, err := w.do(ctx, "POST", base+"/external_api/v1/orders", token, order, 201)
		if err != nil {
			return 0, err
		}
		id, err := leadingID(body)
		if err != nil {
			return 0, err
		}
		t1 := time.Now()
		body, err = w.do(ctx, "POST", base+"/external_api/v1/orders/"+id+"/charge", token, charge, 200)
		d := time.Since(t1)
		if err != nil {
			return d, err
		}
		if n := bytes.Count(body, billKey); n != 12 {
			return d, fmt.Errorf("charge answered %d bills, want 12", n)
		}
		w.secondLatency(t1.Sub(t0))
		return d, nil
	}
}

// leadingID is the "id" an order form starts with.
func leadingID(body []byte) (string, error) {
	const p = `{"id":"`
	if len(body) >= len(p)+36 && bytes.HasPrefix(body, []byte(p)) {
		return string(body[len(p) : len(p)+36]), nil
	}
	return "", fmt.Errorf("no leading id in %.200s", body)
}

// profile starts a CPU profile of the server for the next few seconds when
// --profile is set; it does not wait for it.
func (b *bench) profile(ctx context.Context, srv *parcelaServer, name string) {
	if b.cfg.profileDir == "" {
		return
	}
	secs := max(1, min(5, int(b.cfg.duration.Seconds())-1))
	path := filepath.Join(b.cfg.profileDir, profileName(srv.engine, name))
	go func() {
		if err := cpuProfile(ctx, srv.ops, secs, path); err != nil {
			b.logf("profile %s: %v", path, err)
		}
	}()
}
