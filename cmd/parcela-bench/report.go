package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// Report is everything one run measured; --json prints it as is.
type Report struct {
	Command         string          `json:"command"`
	Machine         Machine         `json:"machine"`
	Smoke           bool            `json:"smoke"`
	Scale           int             `json:"scale"`
	DurationSeconds float64         `json:"duration_seconds"`
	WarmupSeconds   float64         `json:"warmup_seconds"`
	Baseline        []Result        `json:"baseline"`
	Engines         []*EngineReport `json:"engines"`
	Targets         []Target        `json:"targets"`
}

// Machine is where the run happened.
type Machine struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model"`
	GoVersion string `json:"go_version"`
	Kernel    string `json:"kernel"`
}

// EngineReport is one database engine's run.
type EngineReport struct {
	Engine        string        `json:"engine"`
	Seed          SeedReport    `json:"seed"`
	SettleSeconds float64       `json:"settle_seconds"`
	Scenarios     []Result      `json:"scenarios"`
	Growth        []GrowthPoint `json:"listing_growth"`
}

// GrowthPoint is the listing measured on a database of Bills bills.
type GrowthPoint struct {
	Bills       int     `json:"bills"`
	SeedSeconds float64 `json:"seed_seconds"`
	Result      Result  `json:"result"`
}

// Target is one of the goals and what was measured against it.
type Target struct {
	Engine string `json:"engine"`
	Name   string `json:"name"`
	Got    string `json:"measured"`
	// Pass is nil when the run cannot tell (scenario unavailable, scale
	// below the target's).
	Pass *bool `json:"pass"`
}

func newReport(cfg *config) *Report {
	return &Report{
		Command: commandLine(cfg.args),
		Machine: machine(), Smoke: cfg.smoke, Scale: cfg.scale,
		DurationSeconds: cfg.duration.Seconds(), WarmupSeconds: cfg.warmup.Seconds(),
	}
}

// commandLine is the run's command as it can be pasted into a shell.
func commandLine(args []string) string {
	out := []string{"go", "run", "./cmd/parcela-bench"}
	for _, a := range args {
		if strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@") != "" {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

func (r *Report) baselineAt(conns int) *Result {
	for i := range r.Baseline {
		if r.Baseline[i].Connections == conns {
			return &r.Baseline[i]
		}
	}
	return nil
}

func (e *EngineReport) scenario(name string) *Result {
	for i := range e.Scenarios {
		if e.Scenarios[i].Name == name {
			return &e.Scenarios[i]
		}
	}
	return nil
}

// evaluate fills the ratios to the baseline and checks the targets.
func (r *Report) evaluate() {
	for _, e := range r.Engines {
		for i := range e.Scenarios {
			s := &e.Scenarios[i]
			if b := r.baselineAt(s.Connections); b != nil && b.RPS > 0 && s.Available && !strings.HasPrefix(s.Name, "webhook") {
				s.VsBaseline = s.RPS / b.RPS
			}
		}
		for i := range e.Growth {
			g := &e.Growth[i].Result
			if b := r.baselineAt(g.Connections); b != nil && b.RPS > 0 {
				g.VsBaseline = g.RPS / b.RPS
			}
		}
	}
	yes := func(ok bool) *bool { return &ok }
	for _, e := range r.Engines {
		add := func(name, got string, pass *bool) {
			r.Targets = append(r.Targets, Target{Engine: e.Engine, Name: name, Got: got, Pass: pass})
		}
		if g := e.scenario(scGet); g != nil && e.Engine == "sqlite" {
			add("GET /bills/{id} ≥ 35% of baseline req/s", fmt.Sprintf("%.0f%% (%.0f req/s)", 100*g.VsBaseline, g.RPS), yes(g.VsBaseline >= 0.35))
			add("GET /bills/{id} p99 ≤ 10 ms", fmt.Sprintf("%.2f ms", g.P99ms), yes(g.P99ms <= 10))
		}
		if l := e.scenario(scList); l != nil {
			var pass *bool
			if e.Seed.Bills >= 1_000_000 {
				pass = yes(l.P99ms <= 30)
			}
			add("GET /bills filtered p99 ≤ 30 ms at 1M bills", fmt.Sprintf("%.2f ms at %d bills", l.P99ms, e.Seed.Bills), pass)
		}
		if n := len(e.Growth); n >= 2 {
			lo, hi := e.Growth[0], e.Growth[n-1]
			if lo.Result.P50ms > 0 && lo.Result.P99ms > 0 {
				p50, p99 := hi.Result.P50ms/lo.Result.P50ms, hi.Result.P99ms/lo.Result.P99ms
				add(fmt.Sprintf("listing cost flat from %s to %s bills (p50 and p99 within 1.5×)", short(lo.Bills), short(hi.Bills)),
					fmt.Sprintf("p50 ×%.2f, p99 ×%.2f", p50, p99), yes(p50 <= 1.5 && p99 <= 1.5))
			}
		}
		if c := e.scenario(scCharge); c != nil {
			want := 1500.0
			if e.Engine == "postgres" {
				want = 1000
			}
			add(fmt.Sprintf("charge (financed, 12 bills) ≥ %.0f/s", want), fmt.Sprintf("%.0f/s", c.RPS), yes(c.RPS >= want))
			add("charge p99 ≤ 50 ms", fmt.Sprintf("%.2f ms", c.P99ms), yes(c.P99ms <= 50))
		}
		if w := e.scenario(scWebhookMax); w != nil {
			if w.Available {
				got := fmt.Sprintf("%.0f/s overall", w.RPS)
				rate := w.RPS
				if d := w.Extra["drain_deliveries_per_second"]; d > 0 {
					got += fmt.Sprintf(", %.0f/s draining the backlog", d)
					rate = max(rate, d)
				}
				add("webhook delivery ≥ 2,000/s", got, yes(rate >= 2000))
			} else {
				add("webhook delivery ≥ 2,000/s", w.Note, nil)
			}
		}
		if w := e.scenario(scWebhookRate); w != nil {
			name := fmt.Sprintf("webhook event-to-receipt p99 ≤ 1 s at 500 events/s")
			switch {
			case !w.Available:
				add(name, w.Note, nil)
			case w.Extra["events_per_second_target"] != 500:
				add(name, fmt.Sprintf("%.0f ms at %.0f events/s", w.P99ms, w.Extra["events_per_second_target"]), nil)
			default:
				add(name, fmt.Sprintf("%.0f ms (%d errors)", w.P99ms, w.Errors), yes(w.P99ms <= 1000 && w.Errors == 0))
			}
		}
		peak := 0.0
		for _, s := range e.Scenarios {
			peak = max(peak, s.PeakRSSMB)
		}
		add("server peak RSS ≤ 250 MB", fmt.Sprintf("%.0f MB", peak), yes(peak <= 250))
		var pass *bool
		if e.Seed.Bills >= 1_000_000 && !e.Seed.Reused {
			pass = yes(e.Seed.Seconds <= 60)
		}
		got := fmt.Sprintf("%.1f s for %d bills", e.Seed.Seconds, e.Seed.Bills)
		if e.Seed.Reused {
			got = "reused an existing database"
		}
		add("seeding 1M bills ≤ 60 s", got, pass)
	}
}

func (r *Report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func short(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 < 1000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 < 20:
		return fmt.Sprintf("%dk", n/1000)
	}
	return thousands(n)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (r *Report) writeMarkdown(w io.Writer) {
	fmt.Fprintf(w, "# parcela-bench\n\n")
	fmt.Fprintf(w, "`%s` on %d × %s (%s, Linux %s); %.0f s measured per scenario after %.1f s of warm-up; client and server on the same machine.\n\n",
		r.Command, r.Machine.CPUs, r.Machine.CPUModel, r.Machine.GoVersion, r.Machine.Kernel, r.DurationSeconds, r.WarmupSeconds)
	for _, e := range r.Engines {
		s := e.Seed
		fmt.Fprintf(w, "## %s, %s bills\n\n", e.Engine, thousands(s.Bills))
		if s.Reused {
			fmt.Fprintf(w, "Reused a seeded database: %s bills, %s payments, %s billings, %d companies.\n\n",
				thousands(s.Bills), thousands(s.Payments), thousands(s.Billings), s.Companies)
		} else {
			fmt.Fprintf(w, "Seeded %s bills, %s payments, %s billings and orders, %d companies (%s bills in the benchmarked one) in **%.1f s** (%s rows/s).\n\n",
				thousands(s.Bills), thousands(s.Payments), thousands(s.Billings), s.Companies, thousands(s.BenchmarkBills), s.Seconds, thousands(int(s.RowsPerSecond)))
		}
		fmt.Fprintln(w, "| scenario | conns | req/s | p50 ms | p99 ms | errors | server CPU % | server peak RSS MB | req/s vs baseline |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
		shown := map[int]bool{}
		for _, sc := range e.Scenarios {
			if b := r.baselineAt(sc.Connections); b != nil && !shown[b.Connections] && sc.Available {
				shown[b.Connections] = true
				fmt.Fprintf(w, "| baseline: bare net/http, %.0f-byte bill JSON | %d | %.0f | %.2f | %.2f | %d | %.0f | %.0f | 100%% |\n",
					b.Extra["body_bytes"], b.Connections, b.RPS, b.P50ms, b.P99ms, b.Errors, b.ServerCPU, b.PeakRSSMB)
			}
			if !sc.Available {
				fmt.Fprintf(w, "| %s | | | | | | | | %s |\n", sc.Name, sc.Note)
				continue
			}
			ratio := "—"
			if sc.VsBaseline > 0 {
				ratio = fmt.Sprintf("%.1f%%", 100*sc.VsBaseline)
			}
			fmt.Fprintf(w, "| %s | %d | %.0f | %.2f | %.2f | %d | %.0f | %.0f | %s |\n",
				sc.Name, sc.Connections, sc.RPS, sc.P50ms, sc.P99ms, sc.Errors, sc.ServerCPU, sc.PeakRSSMB, ratio)
		}
		fmt.Fprintln(w)
		if c := e.scenario(scCharge); c != nil && c.Extra != nil {
			fmt.Fprintf(w, "Charge rows time the charge; the order created before it took p50 %.2f ms, p99 %.2f ms. ",
				c.Extra["second_p50_ms"], c.Extra["second_p99_ms"])
		}
		if l := e.scenario(scList); l != nil && l.Extra["pages"] > 0 {
			fmt.Fprintf(w, "%.0f%% of listing pages were full (%d bills). ", 100*l.Extra["full_pages"]/l.Extra["pages"], listPage)
		}
		if wr := e.scenario(scWebhookRate); wr != nil && wr.Available {
			fmt.Fprintf(w, "Webhook rows count deliveries/s and time each event from its created_at to its arrival at the receiver; "+
				"the fixed-rate run wrote %.0f events/s (target %.0f). ", wr.Extra["events_per_second_written"], wr.Extra["events_per_second_target"])
		}
		if wm := e.scenario(scWebhookMax); wm != nil && wm.Available {
			fmt.Fprintf(w, "The saturated run charged %.0f/s (%.0f events/s written), left a backlog of %.0f deliveries when the charges stopped",
				wm.Extra["charges_per_second"], wm.Extra["events_per_second_written"], wm.Extra["backlog_at_stop"])
			if d := wm.Extra["drain_deliveries_per_second"]; d > 0 {
				fmt.Fprintf(w, " and drained it at %.0f deliveries/s (server CPU %.0f%% while draining)", d, wm.Extra["drain_server_cpu_percent"])
			}
			fmt.Fprint(w, ".")
		}
		fmt.Fprintf(w, "\n\n### %s: the listing's cost by number of bills\n\n", e.Engine)
		fmt.Fprintln(w, "| bills | req/s | p50 ms | p99 ms | errors | server CPU % | full pages | p50 × smallest |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, g := range e.Growth {
			full := "—"
			if p := g.Result.Extra["pages"]; p > 0 {
				full = fmt.Sprintf("%.0f%%", 100*g.Result.Extra["full_pages"]/p)
			}
			ratio := 0.0
			if e.Growth[0].Result.P50ms > 0 {
				ratio = g.Result.P50ms / e.Growth[0].Result.P50ms
			}
			fmt.Fprintf(w, "| %s | %.0f | %.2f | %.2f | %d | %.0f | %s | %.2f |\n", thousands(g.Bills), g.Result.RPS, g.Result.P50ms, g.Result.P99ms,
				g.Result.Errors, g.Result.ServerCPU, full, ratio)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "## Targets")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| engine | target | measured | met |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, t := range r.Targets {
		met := "n/a"
		if t.Pass != nil {
			met = map[bool]string{true: "yes", false: "**no**"}[*t.Pass]
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", t.Engine, t.Name, t.Got, met)
	}
	for _, e := range r.Engines {
		for _, s := range append(append([]Result{}, e.Scenarios...), growthResults(e)...) {
			if s.FirstError != "" {
				fmt.Fprintf(w, "\nfirst error (%s, %s): %s\n", e.Engine, s.Name, s.FirstError)
			}
		}
	}
}

func growthResults(e *EngineReport) []Result {
	var out []Result
	for _, g := range e.Growth {
		out = append(out, g.Result)
	}
	return out
}
