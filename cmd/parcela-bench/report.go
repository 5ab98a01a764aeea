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
	// MainBinary and AgainstBinary are the two binaries of an alternation
	// (--against).
	MainBinary    string `json:"main_binary,omitempty"`
	AgainstBinary string `json:"against_binary,omitempty"`
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
	Alternations  []Alternation `json:"alternations,omitempty"`
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

// cpuBaseline is the bare baseline's server CPU per request at conns
// connections, or at the fewest it was run with (a scenario on one
// connection has no baseline of its own; a request's CPU moves little
// with the connections).
func (r *Report) cpuBaseline(conns int) float64 {
	if b := r.baselineAt(conns); b != nil {
		return b.ServerCPUPerOpUS
	}
	var fewest *Result
	for i := range r.Baseline {
		if fewest == nil || r.Baseline[i].Connections < fewest.Connections {
			fewest = &r.Baseline[i]
		}
	}
	if fewest == nil {
		return 0
	}
	return fewest.ServerCPUPerOpUS
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
			if b := r.cpuBaseline(s.Connections); b > 0 && s.Available {
				s.CPUVsBaseline = s.ServerCPUPerOpUS / b
			}
		}
		for i := range e.Growth {
			g := &e.Growth[i].Result
			if b := r.baselineAt(g.Connections); b != nil && b.RPS > 0 {
				g.VsBaseline = g.RPS / b.RPS
			}
		}
	}
	for _, e := range r.Engines {
		if r.AgainstBinary == "" {
			r.Targets = append(r.Targets, e.targets()...)
		}
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
		if r.AgainstBinary != "" {
			writeAlternations(w, e.Engine, r.MainBinary, r.AgainstBinary, e.Alternations)
			continue
		}
		fmt.Fprintln(w, "| scenario | conns | req/s | p50 ms | p99 ms | errors | server CPU % | server CPU µs/op | CPU/op × baseline's | SQLite writer busy % | server peak RSS MB | req/s vs baseline |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		shown := map[int]bool{}
		for _, sc := range e.Scenarios {
			if b := r.baselineAt(sc.Connections); b != nil && !shown[b.Connections] && sc.Available {
				shown[b.Connections] = true
				fmt.Fprintf(w, "| baseline: bare net/http, %.0f-byte bill JSON | %d | %.0f | %.2f | %.2f | %d | %.0f | %.0f | 1 | — | %.0f | 100%% |\n",
					b.Extra["body_bytes"], b.Connections, b.RPS, b.P50ms, b.P99ms, b.Errors, b.ServerCPU, b.ServerCPUPerOpUS, b.PeakRSSMB)
			}
			if !sc.Available {
				fmt.Fprintf(w, "| %s | | | | | | | | | | | %s |\n", sc.Name, sc.Note)
				continue
			}
			ratio := "—"
			if sc.VsBaseline > 0 {
				ratio = fmt.Sprintf("%.1f%%", 100*sc.VsBaseline)
			}
			cpuRatio := "—"
			if sc.CPUVsBaseline > 0 {
				cpuRatio = fmt.Sprintf("%.1f", sc.CPUVsBaseline)
			}
			writer := "—"
			if sc.Writer != nil {
				writer = fmt.Sprintf("%.0f", sc.Writer.BusyPercent)
			}
			fmt.Fprintf(w, "| %s | %d | %.0f | %.2f | %.2f | %d | %.0f | %.0f | %s | %s | %.0f | %s |\n",
				sc.Name, sc.Connections, sc.RPS, sc.P50ms, sc.P99ms, sc.Errors, sc.ServerCPU, sc.ServerCPUPerOpUS, cpuRatio, writer, sc.PeakRSSMB, ratio)
		}
		fmt.Fprintln(w)
		e.writeNotes(w)
		r.writeMachineCPU(w, e)
		fmt.Fprintf(w, "\n\n### %s: the listing's cost by number of bills\n\n", e.Engine)
		fmt.Fprintln(w, "| bills | req/s | p50 ms | p99 ms | errors | server CPU % | CPU µs/page | CPU µs/bill | full pages | p50 × smallest |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, g := range e.Growth {
			full := "—"
			if p := g.Result.Extra["pages"]; p > 0 {
				full = fmt.Sprintf("%.0f%%", 100*g.Result.Extra["full_pages"]/p)
			}
			ratio := 0.0
			if e.Growth[0].Result.P50ms > 0 {
				ratio = g.Result.P50ms / e.Growth[0].Result.P50ms
			}
			fmt.Fprintf(w, "| %s | %.0f | %.2f | %.2f | %d | %.0f | %.0f | %.1f | %s | %.2f |\n", thousands(g.Bills), g.Result.RPS, g.Result.P50ms, g.Result.P99ms,
				g.Result.Errors, g.Result.ServerCPU, g.Result.ServerCPUPerOpUS, g.Result.Extra["server_cpu_us_per_bill"], full, ratio)
		}
		fmt.Fprintln(w)
		if wal := e.scenario(scWAL); wal != nil && wal.Available && wal.WAL != nil {
			e.writeWAL(w, wal)
		}
	}
	if r.AgainstBinary != "" {
		return // an alternation compares two binaries; it measures no target
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

// writeNotes says what the table's figures of each scenario mean.
func (e *EngineReport) writeNotes(w io.Writer) {
	fmt.Fprint(w, "Server CPU is the server process's user + system time (/proc/PID/stat) between the measured window's two edges, per operation completed in the window. ")
	if c := e.scenario(scCharge); c != nil && c.Available {
		fmt.Fprintf(w, "Charge rows time the charge and count an order + charge as one operation; the order created before it took p50 %.2f ms, p99 %.2f ms. ",
			c.Extra["second_p50_ms"], c.Extra["second_p99_ms"])
		if c.Writer != nil && c.RPS > 0 {
			fmt.Fprintf(w, "SQLite's write lock was held %.0f%% of the window (%d samples), so the writer was held about **%.2f ms per order + charge** (background writes included; "+
				"the throughput alone bounds it by %.2f ms)", c.Writer.BusyPercent, c.Writer.Samples, c.Writer.HeldPerOpUS/1000, 1000/c.RPS)
			if a := e.scenario(scChargeAlone); a != nil && a.Available && a.Writer != nil {
				fmt.Fprintf(w, "; on one connection, where no other request competes for the cores, %.2f ms (%.0f%% busy at %.0f/s)",
					a.Writer.HeldPerOpUS/1000, a.Writer.BusyPercent, a.RPS)
			}
			fmt.Fprint(w, ". ")
		}
	}
	if l := e.scenario(scList); l != nil && l.Extra["pages"] > 0 {
		fmt.Fprintf(w, "%.0f%% of listing pages were full (%d bills); the listing cost %.1f µs of server CPU per bill returned. ",
			100*l.Extra["full_pages"]/l.Extra["pages"], listPage, l.Extra["server_cpu_us_per_bill"])
	}
	for _, name := range []string{scOfferPage, scCheckoutPage} {
		if p := e.scenario(name); p != nil && p.Available {
			fmt.Fprintf(w, "%s: %.0f µs of server CPU per page. ", name, p.ServerCPUPerOpUS)
		}
	}
	if wr := e.scenario(scWebhookRate); wr != nil && wr.Available {
		fmt.Fprintf(w, "Webhook rows count deliveries/s, time each event from its created_at to its arrival at the receiver, and divide the server's CPU by deliveries "+
			"(the charges that wrote the events included); the fixed-rate run wrote %.0f events/s (target %.0f). ",
			wr.Extra["events_per_second_written"], wr.Extra["events_per_second_target"])
	}
	if wm := e.scenario(scWebhookMax); wm != nil && wm.Available {
		if wm.Extra["deliveries_held"] > 0 {
			fmt.Fprintf(w, "The saturated run **held the deliveries** (River's delivery queue paused) while it charged %.0f/s (%.0f events/s written); "+
				"%.0f went out during the charges, leaving a backlog of %.0f deliveries, released %.1f s after the charges stopped",
				wm.Extra["charges_per_second"], wm.Extra["events_per_second_written"], wm.Extra["delivered_during_charges"], wm.Extra["backlog_at_stop"], wm.Extra["resume_seconds"])
		} else {
			fmt.Fprintf(w, "The saturated run could **not hold the deliveries** (see its first error): it charged %.0f/s (%.0f events/s written) and left a backlog of %.0f deliveries when the charges stopped",
				wm.Extra["charges_per_second"], wm.Extra["events_per_second_written"], wm.Extra["backlog_at_stop"])
		}
		if d := wm.Extra["drain_deliveries_per_second"]; d > 0 {
			fmt.Fprintf(w, "; it drained at %.0f deliveries/s (%.0f in %.1f s): server CPU %.0f%% while draining, **%.0f µs per delivery**",
				d, wm.Extra["drain_deliveries"], wm.Extra["drain_seconds"], wm.Extra["drain_server_cpu_percent"], wm.Extra["drain_server_cpu_us_per_delivery"])
			if b, ok := wm.Extra["drain_sqlite_writer_busy_percent"]; ok {
				fmt.Fprintf(w, "; SQLite's writer busy %.0f%%, %.0f µs per delivery", b, wm.Extra["drain_sqlite_writer_held_us_per_delivery"])
			}
		}
		fmt.Fprint(w, ".")
	}
}

// writeWAL reports the log's size under sustained charges.
func (e *EngineReport) writeWAL(w io.Writer, r *Result) {
	z := r.WAL
	under := "**no**"
	if z.PeakBytes < z.BoundBytes {
		under = "yes"
	}
	fmt.Fprintf(w, "### %s: the write-ahead log under sustained charges\n\n", e.Engine)
	fmt.Fprintf(w, "Orders + charges back to back on %d connections, measured for %.0f s after the warm-up: %.0f/s, p50 %.2f ms, p99 %.2f ms, %d errors, "+
		"server CPU %.0f µs per order + charge. The `-wal` file, sampled every %s through the whole run (%.0f s, %d samples), peaked at **%.1f MB** (%.0f s in) "+
		"and ended at %.1f MB; %d samples were at or over %.0f MB; the database file ended at %.0f MB. Under the %.0f MB bound: %s.\n\n",
		r.Connections, r.Seconds, r.RPS, r.P50ms, r.P99ms, r.Errors, r.ServerCPUPerOpUS,
		walSampleEvery, z.RunSeconds, z.Samples, mb(z.PeakBytes), z.PeakAtSeconds, mb(z.FinalBytes), z.OverBound, mb(z.BoundBytes),
		mb(z.DatabaseBytes), mb(z.BoundBytes), under)
}

func growthResults(e *EngineReport) []Result {
	var out []Result
	for _, g := range e.Growth {
		out = append(out, g.Result)
	}
	return out
}

// writeMachineCPU writes where the machine's CPU went in each scenario of
// e (and its baselines), per operation: the server's, the load
// generator's, the database's when it runs here, and the rest.
func (r *Report) writeMachineCPU(w io.Writer, e *EngineReport) {
	var rows []Result
	shown := map[int]bool{}
	for _, sc := range e.Scenarios {
		if b := r.baselineAt(sc.Connections); b != nil && !shown[b.Connections] && sc.Available {
			shown[b.Connections] = true
			bl := *b
			bl.Name = "baseline: bare net/http"
			rows = append(rows, bl)
		}
		if sc.Available && sc.CPU != nil {
			rows = append(rows, sc)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n\n### %s: where the machine's CPU went, per operation\n\n", e.Engine)
	fmt.Fprintln(w, "| scenario | conns | all cores busy % | machine µs/op | server µs/op | load generator µs/op | PostgreSQL µs/op | rest µs/op |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, sc := range rows {
		if sc.CPU == nil {
			continue
		}
		db := "—"
		if sc.CPU.HasDatabase {
			db = fmt.Sprintf("%.0f", sc.CPU.DatabaseUS)
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.0f | %.0f | %s | %.0f |\n", sc.Name, sc.Connections, sc.CPU.BusyPercent,
			sc.CPU.MachineUS, sc.CPU.ServerUS, sc.CPU.LoadUS, db, sc.CPU.RestUS)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "All cores' busy time (/proc/stat) over the window, per operation, split by who spent it: the server, the load generator (this process), PostgreSQL's processes when it runs on this machine, and the rest (the kernel's threads, other processes). The load runs on the server's machine, so a closed loop's rate is about the cores' time over the machine's µs/op.\n")
}
