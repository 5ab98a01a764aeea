package main

import (
	"fmt"
	"time"
)

// The performance goals, each measured at 1,000,000 bills on both engines:
// server CPU per operation beside throughput, and SQLite's log bound. At a
// smaller scale a goal shows its figure without a verdict, and so does one
// whose scenario did not run or cannot tell.

const (
	goalScale       = 1_000_000
	goalWALDuration = 5 * time.Minute
)

// targets checks one engine's figures against the goals.
func (e *EngineReport) targets() []Target {
	var out []Target
	atScale := e.Seed.Bills >= goalScale
	add := func(name, got string, pass *bool) {
		out = append(out, Target{Engine: e.Engine, Name: name, Got: got, Pass: pass})
	}
	// verdict is nil below the goals' scale.
	verdict := func(ok bool) *bool {
		if !atScale {
			return nil
		}
		return &ok
	}
	ran := func(name string) *Result {
		if s := e.scenario(name); s != nil && s.Available {
			return s
		}
		return nil
	}

	if g := ran(scGet); g != nil {
		add("GET /bills/{id}: server CPU ≤ 150 µs", fmt.Sprintf("%.0f µs", g.ServerCPUPerOpUS), verdict(g.ServerCPUPerOpUS <= 150))
		add("GET /bills/{id}: ≥ 35% of the bare baseline's req/s", fmt.Sprintf("%.0f%% (%.0f req/s)", 100*g.VsBaseline, g.RPS), verdict(g.VsBaseline >= 0.35))
	}
	if l := ran(scList); l != nil {
		perBill := l.Extra["server_cpu_us_per_bill"]
		add("GET /bills filtered: server CPU ≤ 40 µs per bill returned",
			fmt.Sprintf("%.1f µs (%.0f µs per page of %.0f bills on average)", perBill, l.ServerCPUPerOpUS, l.Extra["bills"]/max(1, l.Extra["pages"])),
			verdict(perBill > 0 && perBill <= 40))
		p99 := verdict(l.P99ms <= 50)
		if l.Connections != 16 {
			p99 = nil
		}
		add("GET /bills filtered: p99 ≤ 50 ms at 16 connections", fmt.Sprintf("%.2f ms at %d connections", l.P99ms, l.Connections), p99)
	}
	if n := len(e.Growth); n >= 2 {
		lo, hi := e.Growth[0], e.Growth[n-1]
		a, b := lo.Result.Extra["server_cpu_us_per_bill"], hi.Result.Extra["server_cpu_us_per_bill"]
		if a > 0 && b > 0 {
			var pass *bool
			if hi.Bills >= goalScale {
				ok := b/a <= 1.5
				pass = &ok
			}
			add(fmt.Sprintf("listing: server CPU per bill flat from %s to %s bills (within 1.5×)", short(lo.Bills), short(hi.Bills)),
				fmt.Sprintf("%.1f → %.1f µs (×%.2f); p50 ×%.2f", a, b, b/a, hi.Result.P50ms/max(lo.Result.P50ms, 0.001)), pass)
		}
	}
	for _, p := range []struct{ name, goal string }{{scOfferPage, "offer page"}, {scCheckoutPage, "checkout page"}} {
		switch s := e.scenario(p.name); {
		case s == nil:
		case !s.Available:
			add(p.goal+": server CPU ≤ 300 µs", s.Note, nil)
		default:
			add(p.goal+": server CPU ≤ 300 µs", fmt.Sprintf("%.0f µs", s.ServerCPUPerOpUS), verdict(s.ServerCPUPerOpUS <= 300))
		}
	}
	if c := ran(scCharge); c != nil {
		add("order + charge (12 bills): server CPU ≤ 1.5 ms", fmt.Sprintf("%.2f ms", c.ServerCPUPerOpUS/1000), verdict(c.ServerCPUPerOpUS <= 1500))
		if e.Engine == "sqlite" {
			if c.Writer != nil {
				got := fmt.Sprintf("%.2f ms at %d connections (busy %.0f%% of the window)", c.Writer.HeldPerOpUS/1000, c.Connections, c.Writer.BusyPercent)
				if a := ran(scChargeAlone); a != nil && a.Writer != nil {
					got += fmt.Sprintf("; %.2f ms on one connection", a.Writer.HeldPerOpUS/1000)
				}
				add("order + charge: SQLite writer held ≤ 0.6 ms", got, verdict(c.Writer.HeldPerOpUS <= 600))
			} else {
				add("order + charge: SQLite writer held ≤ 0.6 ms", "not measured (no lock probe)", nil)
			}
		}
		want := 1000.0
		if e.Engine == "postgres" {
			want = 800
		}
		add(fmt.Sprintf("order + charge ≥ %s/s", thousands(int(want))), fmt.Sprintf("%.0f/s", c.RPS), verdict(c.RPS >= want))
	}
	if w := e.scenario(scWebhookMax); w != nil {
		const rate, cpu = "webhook delivery ≥ 2,000/s", "webhook delivery: server CPU ≤ 200 µs (draining)"
		switch {
		case !w.Available:
			add(rate, w.Note, nil)
		default:
			got, r := fmt.Sprintf("%.0f/s overall", w.RPS), w.RPS
			if d := w.Extra["drain_deliveries_per_second"]; d > 0 {
				got += fmt.Sprintf(", %.0f/s draining the backlog", d)
				r = max(r, d)
			}
			add(rate, got, verdict(r >= 2000))
			if us := w.Extra["drain_server_cpu_us_per_delivery"]; us > 0 {
				add(cpu, fmt.Sprintf("%.0f µs over %.0f deliveries", us, w.Extra["drain_deliveries"]), verdict(us <= 200))
			} else {
				add(cpu, "no backlog was left to drain", nil)
			}
		}
	}
	if w := e.scenario(scWebhookRate); w != nil {
		name := "webhook event-to-receipt p99 ≤ 1 s at 500 events/s"
		switch {
		case !w.Available:
			add(name, w.Note, nil)
		case w.Extra["events_per_second_target"] != 500:
			add(name, fmt.Sprintf("%.0f ms at %.0f events/s", w.P99ms, w.Extra["events_per_second_target"]), nil)
		default:
			add(name, fmt.Sprintf("%.0f ms (%d errors)", w.P99ms, w.Errors), verdict(w.P99ms <= 1000 && w.Errors == 0))
		}
	}
	if w := e.scenario(scWAL); w != nil && e.Engine == "sqlite" {
		name := fmt.Sprintf("SQLite WAL under %.0f MB through %.0f minutes of charges", mb(walBound), goalWALDuration.Minutes())
		switch {
		case !w.Available || w.WAL == nil:
			add(name, w.Note, nil)
		default:
			var pass *bool
			if w.Seconds >= goalWALDuration.Seconds()-1 {
				ok := w.WAL.PeakBytes < walBound && w.Errors == 0
				pass = &ok
			}
			add(name, fmt.Sprintf("peak %.1f MB at %.0f s, final %.1f MB, over %.0f s of charges at %.0f/s", mb(w.WAL.PeakBytes), w.WAL.PeakAtSeconds,
				mb(w.WAL.FinalBytes), w.Seconds, w.RPS), pass)
		}
	}
	peak := 0.0
	for _, s := range e.Scenarios {
		peak = max(peak, s.PeakRSSMB)
	}
	add("server peak RSS ≤ 250 MB", fmt.Sprintf("%.0f MB", peak), verdict(peak <= 250))
	var pass *bool
	if atScale && !e.Seed.Reused {
		ok := e.Seed.Seconds <= 60
		pass = &ok
	}
	got := fmt.Sprintf("%.1f s for %d bills", e.Seed.Seconds, e.Seed.Bills)
	if e.Seed.Reused {
		got = "reused an existing database"
	}
	add("seeding 1M bills ≤ 60 s", got, pass)
	return out
}
