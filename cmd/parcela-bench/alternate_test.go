package main

import (
	"io"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

// The rounds' ratios are the other binary's figure over the main one's,
// and a round missing a figure on either side gives no ratio.
func TestAlternationRatios(t *testing.T) {
	a := Alternation{Rounds: []AlternatedRound{
		{Main: Result{ServerCPUPerOpUS: 100, RPS: 10, P99ms: 4}, Against: Result{ServerCPUPerOpUS: 80, RPS: 12, P99ms: 2}},
		{Main: Result{ServerCPUPerOpUS: 100, RPS: 10, P99ms: 4, Writer: &WriterShare{HeldPerOpUS: 50}},
			Against: Result{ServerCPUPerOpUS: 120, RPS: 8, P99ms: 8, Writer: &WriterShare{HeldPerOpUS: 25}}},
		{Main: Result{ServerCPUPerOpUS: 100, RPS: 10, P99ms: 4}, Against: Result{ServerCPUPerOpUS: 90, RPS: 11, P99ms: 4}},
	}}
	a.summarize()
	if a.CPURatio != 0.9 || a.RateRatio != 1.1 || a.P99Ratio != 1 || a.WriterRatio != 0.5 {
		t.Fatalf("ratios %+v, want CPU 0.9, rate 1.1, p99 1, writer 0.5", a)
	}
}

func TestAgainstNeedsAScenarioItAlternates(t *testing.T) {
	for _, args := range [][]string{
		{"--against", "x", "--only", "webhooks"},
		{"--against", "x", "--rounds", "0"},
		{"--against", "x", "--profile", "/tmp/p"},
	} {
		if _, err := parseConfig(args, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if _, err := parseConfig([]string{"--against", "x", "--only", "list"}, io.Discard); err != nil {
		t.Errorf("--against with the listing: %v", err)
	}
}
