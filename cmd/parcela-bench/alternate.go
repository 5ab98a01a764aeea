package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// Alternation (--against). The machine's speed drifts by a third within
// minutes (docs/performance.md), so two binaries measured one whole run
// after the other differ by their phase as much as by their code. With
// --against, each of the get, list and charge scenarios runs in rounds on
// one database: in each round both binaries serve it in turn, each started
// afresh and settled, the first of the pair alternating between rounds.
// Each round's ratios (the other binary's figure over the main one's) pair
// two measurements a scenario's length apart, and their median is the
// comparison: a phase that moves both of a pair moves no ratio.

// Alternation is one scenario measured in rounds on two binaries.
type Alternation struct {
	Scenario string            `json:"scenario"`
	Rounds   []AlternatedRound `json:"rounds"`
	// The medians of the rounds' ratios, the other binary's over the
	// main one's: server CPU per operation, requests a second, p99, and
	// for the charge SQLite's writer held per operation.
	CPURatio    float64 `json:"cpu_per_op_ratio"`
	RateRatio   float64 `json:"rate_ratio"`
	P99Ratio    float64 `json:"p99_ratio"`
	WriterRatio float64 `json:"writer_per_op_ratio,omitempty"`
}

// AlternatedRound is one round: the main binary's result and the other's.
type AlternatedRound struct {
	AgainstFirst bool   `json:"against_first"`
	Main         Result `json:"main"`
	Against      Result `json:"against"`
}

// alternate measures the get, list and charge scenarios the run asks for
// in cfg.rounds rounds of the two binaries on dsn.
func (b *bench) alternate(ctx context.Context, e engineTarget, dsn string, s *seeded) ([]Alternation, error) {
	type pick struct {
		short, name string
		conns       int
		writes      bool
		op          func(srv *parcelaServer) op
	}
	var picks []pick
	if b.cfg.runs("get") {
		picks = append(picks, pick{"get", scGet, b.cfg.getConns, false, func(srv *parcelaServer) op { return getOp(srv.sandbox, s.token, s.billIDs) }})
	}
	if b.cfg.runs("list") {
		picks = append(picks, pick{"list", scList, b.cfg.listConns, false, func(srv *parcelaServer) op { return listOp(srv.sandbox, s.token, s.now) }})
	}
	if b.cfg.runs("charge") {
		picks = append(picks, pick{"charge", scCharge, b.cfg.chargeConns, true, func(srv *parcelaServer) op {
			return chargeOp(srv.sandbox, s.token, s.offerID, s.financedID)
		}})
	}
	var out []Alternation
	for _, p := range picks {
		a := Alternation{Scenario: p.name}
		for round := range b.cfg.rounds {
			r := AlternatedRound{AgainstFirst: round%2 == 1}
			bins := []string{b.bin, b.cfg.against}
			into := []*Result{&r.Main, &r.Against}
			if r.AgainstFirst {
				slices.Reverse(bins)
				slices.Reverse(into)
			}
			for i, bin := range bins {
				res, err := b.measureOn(ctx, e, dsn, bin, scenario{name: p.name, conns: p.conns, writes: p.writes}, p.op)
				if err != nil {
					return out, fmt.Errorf("%s, round %d, %s: %w", p.short, round+1, bin, err)
				}
				*into[i] = res
			}
			b.logf("%s: %s, round %d: CPU %.0f µs/op (main) and %.0f µs/op (against)", e.name, p.short, round+1,
				r.Main.ServerCPUPerOpUS, r.Against.ServerCPUPerOpUS)
			a.Rounds = append(a.Rounds, r)
		}
		a.summarize()
		out = append(out, a)
	}
	return out, nil
}

// measureOn starts bin on dsn, lets it settle, measures sc once and stops it.
func (b *bench) measureOn(ctx context.Context, e engineTarget, dsn, bin string, sc scenario, op func(*parcelaServer) op) (Result, error) {
	srv, err := startParcela(ctx, bin, dsn, b.cfg.rateLimit)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = srv.stop() }()
	srv.engine, srv.sqlitePath = e.name, sqlitePath(dsn)
	if _, err := settle(ctx, srv.pid(), 2*time.Minute); err != nil {
		return Result{}, err
	}
	sc.op = op(srv)
	r := b.measure(ctx, srv, sc)
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if err := srv.stop(); err != nil {
		return r, fmt.Errorf("parcela serve exited with %v\n%s", err, srv.stderr.String())
	}
	return r, nil
}

// summarize sets a's medians of its rounds' ratios.
func (a *Alternation) summarize() {
	ratio := func(f func(r *Result) float64) float64 {
		var rs []float64
		for i := range a.Rounds {
			m, o := f(&a.Rounds[i].Main), f(&a.Rounds[i].Against)
			if m > 0 && o > 0 {
				rs = append(rs, o/m)
			}
		}
		return median(rs)
	}
	a.CPURatio = ratio(func(r *Result) float64 { return r.ServerCPUPerOpUS })
	a.RateRatio = ratio(func(r *Result) float64 { return r.RPS })
	a.P99Ratio = ratio(func(r *Result) float64 { return r.P99ms })
	a.WriterRatio = ratio(func(r *Result) float64 {
		if r.Writer == nil {
			return 0
		}
		return r.Writer.HeldPerOpUS
	})
}

// median is the median of xs, 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if n := len(xs); n%2 == 1 {
		return xs[n/2]
	} else {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
}

// writeAlternations writes an engine's alternations as markdown.
func writeAlternations(w io.Writer, engine, main, against string, as []Alternation) {
	fmt.Fprintf(w, "### %s: `%s` (main) alternated with `%s` (against)\n\n", engine, main, against)
	fmt.Fprintln(w, "| scenario | round | main: req/s, p99 ms, CPU µs/op, writer µs/op | against: req/s, p99 ms, CPU µs/op, writer µs/op | CPU/op against ÷ main |")
	fmt.Fprintln(w, "|---|---:|---|---|---:|")
	for _, a := range as {
		for i, r := range a.Rounds {
			first := ""
			if r.AgainstFirst {
				first = " (against first)"
			}
			fmt.Fprintf(w, "| %s | %d%s | %s | %s | %.3f |\n", a.Scenario, i+1, first, roundCell(r.Main), roundCell(r.Against),
				r.Against.ServerCPUPerOpUS/max(r.Main.ServerCPUPerOpUS, 1e-9))
		}
		writer := ""
		if a.WriterRatio > 0 {
			writer = fmt.Sprintf(", writer per op %.3f", a.WriterRatio)
		}
		fmt.Fprintf(w, "| %s | **medians of the ratios** | | | CPU per op %.3f, req/s %.3f, p99 %.3f%s |\n", a.Scenario, a.CPURatio, a.RateRatio, a.P99Ratio, writer)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each round runs the scenario on each binary in turn, each started afresh on the same database and settled; a ratio below 1 is the `against` binary spending less (or, for req/s, serving less). Errors or an unavailable scenario show in the cells.")
	fmt.Fprintln(w)
}

func roundCell(r Result) string {
	if !r.Available {
		return r.Note
	}
	writer := "—"
	if r.Writer != nil {
		writer = fmt.Sprintf("%.0f", r.Writer.HeldPerOpUS)
	}
	cell := fmt.Sprintf("%.0f, %.2f, %.0f, %s", r.RPS, r.P99ms, r.ServerCPUPerOpUS, writer)
	if r.Errors > 0 {
		cell += fmt.Sprintf(" (%d errors)", r.Errors)
	}
	return cell
}
