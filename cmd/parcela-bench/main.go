// Command parcela-bench seeds a database at a chosen scale, starts the real
// parcela binary against it and measures the API under load: a bare
// net/http baseline, GET /bills/{id}, the filtered bill listing (and how
// its cost grows with the number of bills), the payer's offer and checkout
// pages when the binary serves them, order + financed charge (and, asked
// for, minutes of it with SQLite's WAL sampled), and webhook delivery, each
// with the server's CPU per operation. It prints a markdown table, or one
// JSON object with --json.
//
//	go run ./cmd/parcela-bench                       # SQLite, 1,000,000 bills, 10 s per scenario
//	go run ./cmd/parcela-bench --smoke               # 2,000 bills, ~1 s per scenario
//	go run ./cmd/parcela-bench --postgres postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
//	go run ./cmd/parcela-bench --parcela-bin OLD --against NEW  # get, list and charge alternating two binaries
//
// Every request goes to 127.0.0.1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if baselineChild() {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "parcela-bench:", err)
		stop()
		code := 1
		if errors.Is(err, errUsage) {
			code = 2
		}
		os.Exit(code)
	}
}

var errUsage = errors.New("usage")

// config is the command line.
type config struct {
	database    string // SQLite file; empty: a temporary one
	postgres    string // admin URL; a fresh database is created and dropped
	reuse       bool   // reuse an already seeded --database
	rateLimit   int    // the server's per-token limit a second; 0: off
	scale       int    // bills in the main database
	growth      []int  // scales the listing is also measured at
	companies   int
	duration    time.Duration
	warmup      time.Duration
	getConns    int
	listConns   int
	chargeConns int
	pageConns   int
	webhookRate int
	walDuration time.Duration // the sustained charge run of the "wal" scenario
	smoke       bool
	json        bool
	parcelaBin  string
	profileDir  string
	against     string          // a second parcela binary to alternate with (alternate.go)
	rounds      int             // rounds of an alternation
	only        map[string]bool // scenarios to run; empty: all
	args        []string
}

// scenarioNames are the names --only takes; "wal" (minutes long) runs only
// when named, or with "all".
var scenarioNames = []string{"get", "list", "offer-page", "checkout-page", "charge", "wal", "webhooks"}

// runs tells whether the named scenario is to run.
func (c *config) runs(scenario string) bool {
	if len(c.only) == 0 {
		return scenario != "wal"
	}
	return c.only[scenario]
}

func parseConfig(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("parcela-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{args: args}
	fs.StringVar(&c.database, "database", "", "SQLite file to seed and keep (default: a temporary file, removed after the run)")
	fs.StringVar(&c.postgres, "postgres", "", "PostgreSQL admin URL: also run every scenario on a fresh database created there (dropped after)")
	fs.BoolVar(&c.reuse, "reuse", false, "reuse --database if it was already seeded by parcela-bench (skips seeding)")
	fs.IntVar(&c.rateLimit, "rate-limit", 0, "the server's per-token rate limit a second (0: off); a limit no run reaches, such as 1000000, measures what counting costs (on PostgreSQL every request counts in the database)")
	fs.IntVar(&c.scale, "scale", 1_000_000, "bills to seed (about 12 per billing)")
	growth := fs.String("growth", "10000,100000", "extra scales (bills) at which the listing is measured; the main scale is always included")
	fs.IntVar(&c.companies, "companies", 5, "companies seeded; the benchmarked one holds ~80% of the rows")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured time per scenario")
	fs.DurationVar(&c.warmup, "warmup", 0, "unmeasured warm-up per scenario (default: duration/5, at most 2s)")
	conns := fs.String("connections", "64,16,16,16", "connections for GET /bills/{id}, GET /bills, order+charge and the pages (the fourth is optional)")
	fs.IntVar(&c.webhookRate, "webhook-rate", 500, "events per second in the webhook scenario")
	fs.DurationVar(&c.walDuration, "wal-duration", 5*time.Minute, "measured time of the wal scenario's sustained charges (SQLite)")
	fs.BoolVar(&c.smoke, "smoke", false, "tiny run: 2,000 bills, 1 s per scenario (2 s of sustained charges for wal), listing growth at 500 and 2,000 (for tests)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object instead of markdown")
	fs.StringVar(&c.parcelaBin, "parcela-bin", "", "parcela binary to run (default: go build ./cmd/parcela into a temporary directory)")
	fs.StringVar(&c.profileDir, "profile", "", "directory to save a CPU profile of the server during each scenario (from the ops listener)")
	fs.StringVar(&c.against, "against", "", "a second parcela binary: run the get, list and charge scenarios alternating the two on one database, in --rounds rounds, and report each round and the medians of their ratios (no other scenario, baseline or listing growth)")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds of --against")
	only := fs.String("only", "", "run only these scenarios, comma-separated: "+strings.Join(scenarioNames, ", ")+", or all (default: all but wal)")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.smoke {
		if !set["scale"] {
			c.scale = 2000
		}
		if !set["duration"] {
			c.duration = time.Second
		}
		if !set["growth"] {
			*growth = "500"
		}
		if !set["companies"] {
			c.companies = 3
		}
		if !set["wal-duration"] {
			c.walDuration = 2 * time.Second
		}
	}
	for _, n := range strings.Split(*only, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
		case n == "all" || slices.Contains(scenarioNames, n):
			if c.only == nil {
				c.only = map[string]bool{}
			}
			for _, s := range scenarioNames {
				c.only[s] = c.only[s] || n == "all" || s == n
			}
		default:
			return nil, fmt.Errorf("%w: --only: unknown scenario %q (%s, all)", errUsage, n, strings.Join(scenarioNames, ", "))
		}
	}
	var err error
	if c.growth, err = intList(*growth); err != nil {
		return nil, fmt.Errorf("%w: --growth: %v", errUsage, err)
	}
	cs, err := intList(*conns)
	if err != nil || len(cs) < 3 || len(cs) > 4 {
		return nil, fmt.Errorf("%w: --connections wants three or four numbers, like 64,16,16,16", errUsage)
	}
	c.getConns, c.listConns, c.chargeConns, c.pageConns = cs[0], cs[1], cs[2], 16
	if len(cs) == 4 {
		c.pageConns = cs[3]
	}
	if c.scale < 24 || c.companies < 1 || c.duration <= 0 || c.webhookRate <= 0 || c.walDuration <= 0 {
		return nil, fmt.Errorf("%w: --scale must be at least 24, --companies at least 1, --duration, --wal-duration and --webhook-rate positive", errUsage)
	}
	for _, n := range cs {
		if n < 1 {
			return nil, fmt.Errorf("%w: connections must be positive", errUsage)
		}
	}
	if c.warmup == 0 {
		c.warmup = min(c.duration/5, 2*time.Second)
	}
	if c.against != "" && (c.rounds < 1 || c.profileDir != "" || !(c.runs("get") || c.runs("list") || c.runs("charge"))) {
		return nil, fmt.Errorf("%w: --against alternates get, list and charge (one of them at least), in --rounds of at least 1, without --profile", errUsage)
	}
	if c.reuse && c.database == "" {
		return nil, fmt.Errorf("%w: --reuse needs --database", errUsage)
	}
	if c.postgres != "" && !strings.HasPrefix(c.postgres, "postgres://") && !strings.HasPrefix(c.postgres, "postgresql://") {
		return nil, fmt.Errorf("%w: --postgres wants a postgres:// URL", errUsage)
	}
	return c, nil
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ReplaceAll(f, "_", ""))
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// run is the whole program.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
	tmp, err := os.MkdirTemp("", "parcela-bench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	bin := cfg.parcelaBin
	if bin == "" {
		logf("building ./cmd/parcela")
		if bin, err = buildParcela(ctx, tmp); err != nil {
			return err
		}
	}
	if cfg.profileDir != "" {
		if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
			return err
		}
	}
	rep := newReport(cfg)
	if cfg.against != "" {
		rep.MainBinary, rep.AgainstBinary = bin, cfg.against
	}
	b := &bench{cfg: cfg, bin: bin, tmp: tmp, logf: logf, report: rep}

	engines := []engineTarget{sqliteTarget(cfg, tmp)}
	if cfg.postgres != "" {
		engines = append(engines, postgresTarget(cfg))
	}
	for _, e := range engines {
		er, err := b.runEngine(ctx, e)
		if er != nil {
			rep.Engines = append(rep.Engines, er)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	rep.evaluate()
	if cfg.json {
		return rep.writeJSON(stdout)
	}
	rep.writeMarkdown(stdout)
	return nil
}
