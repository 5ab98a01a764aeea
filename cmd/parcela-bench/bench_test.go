package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for the harness binary when the
// harness re-executes itself as the baseline server.
func TestMain(m *testing.M) {
	if baselineChild() || lockHolderChild() {
		return
	}
	os.Exit(m.Run())
}

// TestSmoke runs the whole harness in smoke mode (SQLite in a temporary
// directory, the real parcela binary as a child process), every scenario
// including the WAL run, and checks that each ran without errors and with
// its server CPU, per operation, and (where it writes) SQLite writer
// figures. It asserts no timing.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := filepath.Join(t.TempDir(), "bench.db")
	var out, errb bytes.Buffer
	if err := run(ctx, []string{"--smoke", "--only", "all", "--json", "--database", db}, &out, &errb); err != nil {
		t.Fatalf("parcela-bench --smoke: %v\n%s", err, errb.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json output is not a report: %v\n%s", err, out.String())
	}
	if len(rep.Baseline) == 0 {
		t.Fatal("no baseline")
	}
	for _, b := range rep.Baseline {
		if b.Requests == 0 || b.Errors != 0 {
			t.Errorf("baseline at %d connections: %d requests, %d errors (%s)", b.Connections, b.Requests, b.Errors, b.FirstError)
		}
		checkCPU(t, "baseline", b)
	}
	if len(rep.Engines) != 1 || rep.Engines[0].Engine != "sqlite" {
		t.Fatalf("engines %+v, want sqlite only", rep.Engines)
	}
	e := rep.Engines[0]
	if e.Seed.Bills < 2000 || e.Seed.Payments == 0 || e.Seed.Companies < 2 {
		t.Errorf("seed %+v", e.Seed)
	}
	writes := map[string]bool{scCharge: true, scChargeAlone: true, scWAL: true, scWebhookRate: true, scWebhookMax: true}
	for _, name := range []string{scGet, scList, scOfferPage, scCheckoutPage, scCharge, scChargeAlone, scWAL, scWebhookRate, scWebhookMax} {
		s := e.scenario(name)
		switch {
		case s == nil:
			t.Errorf("no %q in the report", name)
			continue
		case !s.Available && (name == scOfferPage || name == scCheckoutPage) && strings.HasPrefix(s.Note, routeNotServed):
			t.Logf("%s: %s", name, s.Note)
			continue
		case !s.Available:
			t.Errorf("%s did not run: %s", name, s.Note)
			continue
		case s.Requests == 0 || s.Errors != 0:
			t.Errorf("%s: %d requests, %d errors (%s)", name, s.Requests, s.Errors, s.FirstError)
		case s.PeakRSSMB <= 0:
			t.Errorf("%s: no peak RSS", name)
		}
		checkCPU(t, name, *s)
		// A smoke run's window can be shorter than a clock tick of the
		// baseline's CPU, which leaves it no ratio.
		if base := rep.cpuBaseline(s.Connections); base > 0 && s.ServerCPUPerOpUS > 0 {
			if want := s.ServerCPUPerOpUS / base; s.CPUVsBaseline != want {
				t.Errorf("%s: CPU vs baseline %v, want %v (%v µs over %v µs)", name, s.CPUVsBaseline, want, s.ServerCPUPerOpUS, base)
			}
		}
		switch {
		case !writes[name] && s.Writer != nil:
			t.Errorf("%s: a writer share for a scenario that does not write", name)
		case writes[name] && (s.Writer == nil || s.Writer.Samples == 0):
			t.Errorf("%s: no SQLite writer samples", name)
		case (name == scCharge || name == scChargeAlone || name == scWAL) && (s.Writer.BusyPercent <= 0 || s.Writer.HeldPerOpUS <= 0):
			t.Errorf("%s: SQLite writer %+v, want it held during charges", name, *s.Writer)
		}
	}
	if l := e.scenario(scList); l != nil && (l.Extra["bills"] <= 0 || l.Extra["server_cpu_us_per_bill"] <= 0) {
		t.Errorf("listing: %v bills returned, %v µs per bill", l.Extra["bills"], l.Extra["server_cpu_us_per_bill"])
	}
	if w := e.scenario(scWAL); w != nil && w.Available {
		if z := w.WAL; z == nil || z.Samples < 2 || z.PeakBytes <= 0 || z.PeakBytes < z.FinalBytes || len(z.PerSecondPeakBytes) == 0 || z.DatabaseBytes <= 0 {
			t.Errorf("WAL sizes %+v", z)
		}
	}
	if w := e.scenario(scWebhookMax); w != nil && w.Available {
		// Held during the charges, the deliveries are the drain's: all but
		// the few that arrived with the first one after the resume.
		held, backlog, drained := w.Extra["deliveries_held"], w.Extra["backlog_at_stop"], w.Extra["drain_deliveries"]
		if held != 1 || backlog <= 0 || drained <= 0 || drained < backlog/2 {
			t.Errorf("saturated webhooks: held %v, backlog %v, drained %v: %v", held, backlog, drained, w.Extra)
		}
		// A drain shorter than a few clock ticks may show no CPU.
		if d, ok := w.Extra["drain_seconds"]; !ok || (d >= 0.5 && w.Extra["drain_server_cpu_us_per_delivery"] <= 0) {
			t.Errorf("drain of %v deliveries: %v", drained, w.Extra)
		}
	}
	if len(e.Growth) < 2 {
		t.Fatalf("listing growth has %d points, want the growth scale and the main one", len(e.Growth))
	}
	for _, g := range e.Growth {
		if g.Result.Requests == 0 || g.Result.Errors != 0 {
			t.Errorf("listing at %d bills: %d requests, %d errors (%s)", g.Bills, g.Result.Requests, g.Result.Errors, g.Result.FirstError)
		}
		checkCPU(t, fmt.Sprintf("listing at %d bills", g.Bills), g.Result)
		if g.Result.Extra["server_cpu_us_per_bill"] <= 0 {
			t.Errorf("listing at %d bills: no CPU per bill", g.Bills)
		}
	}
	if len(rep.Targets) == 0 {
		t.Error("no targets evaluated")
	}
	// The markdown report renders from the same numbers.
	var md bytes.Buffer
	rep.writeMarkdown(&md)
	for _, want := range []string{"| scenario |", "server CPU µs/op", "CPU/op × baseline's", "SQLite writer busy %", scGet, scList, scCharge, scOfferPage,
		"the listing's cost", "CPU µs/bill", "where the machine's CPU went", "load generator µs/op", "per order + charge", "the write-ahead log under sustained charges", "## Targets"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// The database given with --database is kept; temporary ones are not.
	if _, err := os.Stat(db); err != nil {
		t.Errorf("--database file: %v", err)
	}
}

// checkCPU checks a result's server CPU columns: present and positive
// when operations ran in the window.
func checkCPU(t *testing.T, name string, r Result) {
	t.Helper()
	if r.Requests > 0 && (r.ServerCPU <= 0 || r.ServerCPUSeconds <= 0 || r.ServerCPUPerOpUS <= 0) {
		t.Errorf("%s: server CPU %v%%, %v s, %v µs/op over %d operations", name, r.ServerCPU, r.ServerCPUSeconds, r.ServerCPUPerOpUS, r.Requests)
	}
	// The machine's CPU: present, at least the server's and the load
	// generator's, and no database's on SQLite.
	if r.Requests > 0 {
		switch c := r.CPU; {
		case c == nil:
			t.Errorf("%s: no machine CPU", name)
		case c.BusyPercent <= 0 || c.MachineUS <= 0 || c.LoadUS <= 0 || c.HasDatabase || c.DatabaseUS != 0:
			t.Errorf("%s: machine CPU %+v", name, *c)
		case c.ServerUS != r.ServerCPUPerOpUS || c.RestUS < 0:
			t.Errorf("%s: machine CPU %+v against the server's %v µs/op", name, *c, r.ServerCPUPerOpUS)
		}
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--connections", "1,2"}, {"--connections", "1,2,3,4,5"}, {"--scale", "3"}, {"--reuse"},
		{"--postgres", "mysql://x"}, {"--only", "get,pages"}, {"--wal-duration", "0s"}, {"extra"}} {
		if _, err := parseConfig(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	c, err := parseConfig([]string{"--smoke", "--connections", "8,4,2"}, &bytes.Buffer{})
	if err != nil || c.scale != 2000 || c.duration != time.Second || c.getConns != 8 || c.chargeConns != 2 || c.pageConns != 16 || c.walDuration != 2*time.Second {
		t.Fatalf("smoke config %+v, %v", c, err)
	}
	if c.runs("wal") || !c.runs("checkout-page") || !c.runs("webhooks") {
		t.Errorf("by default every scenario but wal runs: wal %v, checkout-page %v", c.runs("wal"), c.runs("checkout-page"))
	}
	c, err = parseConfig([]string{"--only", "offer-page, wal", "--connections", "1,2,3,4"}, &bytes.Buffer{})
	if err != nil || !c.runs("offer-page") || !c.runs("wal") || c.runs("get") || c.pageConns != 4 || c.walDuration != 5*time.Minute {
		t.Errorf("--only offer-page,wal: %+v, %v", c, err)
	}
	c, err = parseConfig([]string{"--only", "all"}, &bytes.Buffer{})
	for _, n := range scenarioNames {
		if err != nil || !c.runs(n) {
			t.Errorf("--only all does not run %s (%v)", n, err)
		}
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(d, 0.5); p != 50*time.Millisecond {
		t.Errorf("p50 %v", p)
	}
	if p := percentile(d, 0.99); p != 99*time.Millisecond {
		t.Errorf("p99 %v", p)
	}
	if p := percentile(d[:1], 0.99); p != time.Millisecond {
		t.Errorf("p99 of one %v", p)
	}
	if p := percentile(nil, 0.5); p != 0 {
		t.Errorf("p50 of none %v", p)
	}
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	got := commandLine([]string{"--postgres", "postgres://u@127.0.0.1:5432/p?sslmode=disable", "--scale", "10"})
	want := "go run ./cmd/parcela-bench --postgres 'postgres://u@127.0.0.1:5432/p?sslmode=disable' --scale 10"
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// A run killed in the webhook scenario leaves the delivery queue paused in
// the database it used; the next run with --reuse resumes it and delivers.
func TestReuseResumesAPausedDeliveryQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := filepath.Join(t.TempDir(), "bench.db")
	smoke := func(args ...string) (Report, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(ctx, append([]string{"--smoke", "--json", "--database", db}, args...), &out, &errb); err != nil {
			t.Fatalf("parcela-bench %v: %v\n%s", args, err, errb.String())
		}
		var rep Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("--json output is not a report: %v\n%s", err, out.String())
		}
		return rep, errb.String()
	}
	smoke("--only", "get") // seeds the file
	hold, err := openQueueHold(ctx, "sqlite:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if err := hold.pause(ctx); err != nil {
		t.Fatal(err)
	}
	hold.close()
	rep, log := smoke("--reuse", "--only", "webhooks")
	if !strings.Contains(log, "left paused by an earlier run") {
		t.Errorf("the paused queue went unnoticed:\n%s", log)
	}
	e := rep.Engines[0]
	for _, name := range []string{scWebhookRate, scWebhookMax} {
		if s := e.scenario(name); s == nil || !s.Available || s.Requests == 0 || s.Errors != 0 {
			t.Errorf("%s after a paused queue: %+v", name, s)
		}
	}
}

// TestAlternationSmoke runs --against in smoke mode with one binary on
// both sides: each asked scenario has its rounds, each side of a round
// ran without errors and with its CPU (and the charge's writer), the first
// side alternates, the medians of the ratios are there, and no target is
// judged. It asserts no timing.
func TestAlternationSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := buildParcela(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	args := []string{"--smoke", "--only", "get,charge", "--json", "--parcela-bin", bin, "--against", bin, "--rounds", "2"}
	if err := run(ctx, args, &out, &errb); err != nil {
		t.Fatalf("parcela-bench %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json output is not a report: %v\n%s", err, out.String())
	}
	if rep.MainBinary != bin || rep.AgainstBinary != bin || len(rep.Targets) != 0 || len(rep.Engines) != 1 {
		t.Fatalf("binaries %q and %q, %d targets, %d engines", rep.MainBinary, rep.AgainstBinary, len(rep.Targets), len(rep.Engines))
	}
	as := rep.Engines[0].Alternations
	if len(as) != 2 || as[0].Scenario != scGet || as[1].Scenario != scCharge {
		t.Fatalf("alternations %+v, want the get and the charge", as)
	}
	for _, a := range as {
		if len(a.Rounds) != 2 || a.Rounds[0].AgainstFirst || !a.Rounds[1].AgainstFirst {
			t.Errorf("%s: %d rounds, want two, the second with the other binary first", a.Scenario, len(a.Rounds))
		}
		for i, r := range a.Rounds {
			for side, s := range map[string]Result{"main": r.Main, "against": r.Against} {
				name := fmt.Sprintf("%s, round %d, %s", a.Scenario, i+1, side)
				if !s.Available || s.Requests == 0 || s.Errors != 0 {
					t.Errorf("%s: available %v, %d requests, %d errors (%s %s)", name, s.Available, s.Requests, s.Errors, s.Note, s.FirstError)
				}
				checkCPU(t, name, s)
				if (a.Scenario == scCharge) != (s.Writer != nil && s.Writer.HeldPerOpUS > 0) {
					t.Errorf("%s: writer %+v", name, s.Writer)
				}
			}
		}
		if a.CPURatio <= 0 || a.RateRatio <= 0 || a.P99Ratio <= 0 || (a.Scenario == scCharge) != (a.WriterRatio > 0) {
			t.Errorf("%s: ratios %+v", a.Scenario, a)
		}
	}
}
