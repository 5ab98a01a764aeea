package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// The load generator: a fixed number of connections, each a goroutine with
// its own keep-alive client, issuing operations back to back (closed loop)
// and recording every latency; percentiles are exact, from the sorted
// latencies of the measured window.

// worker is one connection's goroutine.
type worker struct {
	id     int
	client *http.Client
	rng    *rand.Rand
	buf    bytes.Buffer
	extra  []time.Duration // a second latency some operations record (order creation)
	counts map[string]int64
	record bool
}

// count adds to a named counter of the measured window.
func (w *worker) count(name string, n int64) {
	if !w.record {
		return
	}
	if w.counts == nil {
		w.counts = map[string]int64{}
	}
	w.counts[name] += n
}

// op performs one operation and returns the latency to record.
type op func(ctx context.Context, w *worker) (time.Duration, error)

type loadSpec struct {
	conns            int
	warmup, duration time.Duration
	op               op
	// onMeasure runs when the measured window opens (profiling).
	onMeasure func()
}

// Result is one measured run.
type Result struct {
	Name        string  `json:"name"`
	Connections int     `json:"connections"`
	Requests    int64   `json:"requests"`
	Errors      int64   `json:"errors"`
	Seconds     float64 `json:"seconds"`
	RPS         float64 `json:"requests_per_second"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	PeakRSSMB   float64 `json:"peak_rss_mb,omitempty"`
	// ServerCPU is the server's CPU use over the run, in % of one core.
	ServerCPU  float64 `json:"server_cpu_percent,omitempty"`
	VsBaseline float64 `json:"vs_baseline,omitempty"`
	FirstError string  `json:"first_error,omitempty"`
	// Extra holds scenario-specific numbers (order creation latency, full
	// pages, deliveries).
	Extra map[string]float64 `json:"extra,omitempty"`
	// Available is false for a scenario the server cannot run yet.
	Available bool   `json:"available"`
	Note      string `json:"note,omitempty"`
}

func newClient() *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1,
		MaxIdleConnsPerHost: 1,
		MaxConnsPerHost:     1,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// runLoad runs spec and measures the window after the warm-up. Errors are
// counted in both phases, so a warm-up failure is never hidden.
func runLoad(ctx context.Context, name string, spec loadSpec) Result {
	type outcome struct {
		lat      []time.Duration
		extra    []time.Duration
		counts   map[string]int64
		errs     int64
		firstErr string
		last     time.Time
	}
	outs := make([]outcome, spec.conns)
	start := time.Now()
	measureAt := start.Add(spec.warmup)
	end := measureAt.Add(spec.duration)
	if spec.onMeasure != nil {
		t := time.AfterFunc(spec.warmup, spec.onMeasure)
		defer t.Stop()
	}
	var wg sync.WaitGroup
	for i := range spec.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{id: i, client: newClient(), rng: rand.New(rand.NewPCG(uint64(i)+1, uint64(start.UnixNano())))}
			defer w.client.CloseIdleConnections()
			o := &outs[i]
			o.lat = make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(end) {
					break
				}
				w.record = !t0.Before(measureAt)
				d, err := spec.op(ctx, w)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					o.errs++
					if o.firstErr == "" {
						o.firstErr = err.Error()
					}
					continue
				}
				if w.record {
					o.lat = append(o.lat, d)
				}
			}
			o.extra, o.counts, o.last = w.extra, w.counts, time.Now()
		}()
	}
	wg.Wait()

	r := Result{Name: name, Connections: spec.conns, Available: true}
	var all, extra []time.Duration
	counts := map[string]int64{}
	last := end
	for _, o := range outs {
		for k, v := range o.counts {
			counts[k] += v
		}
		all = append(all, o.lat...)
		extra = append(extra, o.extra...)
		r.Errors += o.errs
		if r.FirstError == "" {
			r.FirstError = o.firstErr
		}
		if o.last.After(last) {
			last = o.last
		}
	}
	r.Requests = int64(len(all))
	r.Seconds = last.Sub(measureAt).Seconds()
	if r.Seconds > 0 {
		r.RPS = float64(r.Requests) / r.Seconds
	}
	slices.Sort(all)
	r.P50ms, r.P99ms = msOf(percentile(all, 0.50)), msOf(percentile(all, 0.99))
	if len(all) > 0 {
		r.MaxMs = msOf(all[len(all)-1])
	}
	if len(extra) > 0 || len(counts) > 0 {
		r.Extra = map[string]float64{}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		r.Extra["second_p50_ms"], r.Extra["second_p99_ms"] = msOf(percentile(extra, 0.50)), msOf(percentile(extra, 0.99))
	}
	for k, v := range counts {
		r.Extra[k] = float64(v)
	}
	return r
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// do sends one request and reads the whole response into w.buf.
func (w *worker) do(ctx context.Context, method, url, token string, body []byte, want int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	w.buf.Reset()
	_, err = w.buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		b := w.buf.Bytes()
		return nil, fmt.Errorf("%s %s: status %d, want %d: %.300s", method, url, resp.StatusCode, want, b)
	}
	return w.buf.Bytes(), nil
}
