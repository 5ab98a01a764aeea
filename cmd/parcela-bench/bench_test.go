package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for the harness binary when the
// harness re-executes itself as the baseline server.
func TestMain(m *testing.M) {
	if baselineChild() {
		return
	}
	os.Exit(m.Run())
}

// TestSmoke runs the whole harness in smoke mode (SQLite in a temporary
// directory, the real parcela binary as a child process) and checks that
// every scenario ran without errors. It asserts no timing.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := filepath.Join(t.TempDir(), "bench.db")
	var out, errb bytes.Buffer
	if err := run(ctx, []string{"--smoke", "--json", "--database", db}, &out, &errb); err != nil {
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
	}
	if len(rep.Engines) != 1 || rep.Engines[0].Engine != "sqlite" {
		t.Fatalf("engines %+v, want sqlite only", rep.Engines)
	}
	e := rep.Engines[0]
	if e.Seed.Bills < 2000 || e.Seed.Payments == 0 || e.Seed.Companies < 2 {
		t.Errorf("seed %+v", e.Seed)
	}
	for _, name := range []string{scGet, scList, scCharge, scWebhookRate, scWebhookMax} {
		s := e.scenario(name)
		switch {
		case s == nil:
			t.Errorf("no %q in the report", name)
		case !s.Available && strings.HasPrefix(name, "webhook") && strings.HasPrefix(s.Note, "not available yet"):
			t.Logf("%s: %s", name, s.Note)
		case !s.Available:
			t.Errorf("%s did not run: %s", name, s.Note)
		case s.Requests == 0 || s.Errors != 0:
			t.Errorf("%s: %d requests, %d errors (%s)", name, s.Requests, s.Errors, s.FirstError)
		case s.PeakRSSMB <= 0:
			t.Errorf("%s: no peak RSS", name)
		}
	}
	if len(e.Growth) < 2 {
		t.Fatalf("listing growth has %d points, want the growth scale and the main one", len(e.Growth))
	}
	for _, g := range e.Growth {
		if g.Result.Requests == 0 || g.Result.Errors != 0 {
			t.Errorf("listing at %d bills: %d requests, %d errors (%s)", g.Bills, g.Result.Requests, g.Result.Errors, g.Result.FirstError)
		}
	}
	if len(rep.Targets) == 0 {
		t.Error("no targets evaluated")
	}
	// The markdown report renders from the same numbers.
	var md bytes.Buffer
	rep.writeMarkdown(&md)
	for _, want := range []string{"| scenario |", scGet, scList, scCharge, "the listing's cost", "## Targets"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// The database given with --database is kept; temporary ones are not.
	if _, err := os.Stat(db); err != nil {
		t.Errorf("--database file: %v", err)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"--connections", "1,2"}, {"--scale", "3"}, {"--reuse"}, {"--postgres", "mysql://x"}, {"extra"}} {
		if _, err := parseConfig(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	c, err := parseConfig([]string{"--smoke", "--connections", "8,4,2"}, &bytes.Buffer{})
	if err != nil || c.scale != 2000 || c.duration != time.Second || c.getConns != 8 || c.chargeConns != 2 {
		t.Fatalf("smoke config %+v, %v", c, err)
	}
}

func TestPercentile(t *testing.T) {
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
	got := commandLine([]string{"--postgres", "postgres://u@127.0.0.1:5432/p?sslmode=disable", "--scale", "10"})
	want := "go run ./cmd/parcela-bench --postgres 'postgres://u@127.0.0.1:5432/p?sslmode=disable' --scale 10"
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
