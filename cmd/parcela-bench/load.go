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
// its own keep-alive client, issuing operations back to back (closed loop).
// The measured window opens after the warm-up and closes duration later;
// the server's CPU (and writer probe) are read at those two instants, and
// the window's operations are those that completed between the readings,
// so the CPU and the operations it is divided by cover the same time.
// Percentiles are exact, from the window's sorted latencies.

// worker is one connection's goroutine.
type worker struct {
	id     int
	client *http.Client
	rng    *rand.Rand
	buf    bytes.Buffer
	// What the operation in progress noted, kept if it completes inside
	// the window.
	second time.Duration // a second latency (order creation)
	counts map[string]int64
}

// count adds to a named counter of the current operation.
func (w *worker) count(name string, n int64) {
	if w.counts == nil {
		w.counts = map[string]int64{}
	}
	w.counts[name] += n
}

// secondLatency records a second latency for the current operation.
func (w *worker) secondLatency(d time.Duration) { w.second = d }

// op performs one operation and returns the latency to record.
type op func(ctx context.Context, w *worker) (time.Duration, error)

type loadSpec struct {
	conns            int
	warmup, duration time.Duration
	op               op
	// pid is the server whose CPU is read at the window's edges (0: none);
	// probe, when set, its SQLite writer.
	pid   int
	probe *writerProbe
	// dbComm names the database's processes on this machine, whose CPU
	// is read too ("" for none).
	dbComm string
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
	// ServerCPU is the server's CPU use over the window, in % of one core;
	// ServerCPUSeconds the CPU time itself, and ServerCPUPerOpUS that time
	// divided by the operations (requests, or deliveries) of the window.
	ServerCPU        float64 `json:"server_cpu_percent,omitempty"`
	ServerCPUSeconds float64 `json:"server_cpu_seconds,omitempty"`
	ServerCPUPerOpUS float64 `json:"server_cpu_us_per_op,omitempty"`
	// Writer is SQLite's write lock over the window, for the scenarios
	// that write.
	Writer *WriterShare `json:"sqlite_writer,omitempty"`
	// CPU is the whole machine's CPU over the window, per operation, by
	// who spent it.
	CPU        *MachineCPU `json:"cpu,omitempty"`
	VsBaseline float64     `json:"vs_baseline,omitempty"`
	// CPUVsBaseline is ServerCPUPerOpUS in units of the bare baseline's
	// CPU per request in the same run: the machine's speed moves by a
	// factor of two between runs, and this ratio mostly does not, so it
	// tells a change of code from a change of phase.
	CPUVsBaseline float64 `json:"cpu_vs_baseline,omitempty"`
	FirstError    string  `json:"first_error,omitempty"`
	// WAL is the wal scenario's log sizes.
	WAL *WALSizes `json:"sqlite_wal,omitempty"`
	// Extra holds scenario-specific numbers (order creation latency, full
	// pages, bills returned, deliveries).
	Extra map[string]float64 `json:"extra,omitempty"`
	// Available is false for a scenario the server cannot run (yet).
	Available bool   `json:"available"`
	Note      string `json:"note,omitempty"`
	// completed counts every successful operation, warm-up and the tail
	// after the window included (what a run wrote).
	completed int64
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

// sample is one completed operation.
type sample struct {
	done        time.Time
	lat, second time.Duration
	counts      map[string]int64
}

// runLoad runs spec and measures the window after the warm-up. Errors are
// counted in every phase, so a warm-up failure is never hidden.
func runLoad(ctx context.Context, name string, spec loadSpec) Result {
	type outcome struct {
		samples   []sample
		completed int64
		errs      int64
		firstErr  string
	}
	outs := make([]outcome, spec.conns)
	start := time.Now()
	measureAt := start.Add(spec.warmup)
	end := measureAt.Add(spec.duration)

	var open, closed reading
	edges := make(chan struct{})
	go func() {
		defer close(edges)
		sleepUntil(ctx, measureAt)
		open = readServer(spec.pid, spec.probe, spec.dbComm)
		if spec.onMeasure != nil {
			spec.onMeasure()
		}
		sleepUntil(ctx, end)
		closed = readServer(spec.pid, spec.probe, spec.dbComm)
	}()

	var wg sync.WaitGroup
	for i := range spec.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{id: i, client: newClient(), rng: rand.New(rand.NewPCG(uint64(i)+1, uint64(start.UnixNano())))}
			defer w.client.CloseIdleConnections()
			o := &outs[i]
			o.samples = make([]sample, 0, 4096)
			for ctx.Err() == nil && time.Now().Before(end) {
				w.second, w.counts = 0, nil
				d, err := spec.op(ctx, w)
				done := time.Now()
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
				o.completed++
				if !done.Before(measureAt) {
					o.samples = append(o.samples, sample{done: done, lat: d, second: w.second, counts: w.counts})
				}
			}
		}()
	}
	wg.Wait()
	<-edges

	r := Result{Name: name, Connections: spec.conns, Available: true}
	var all, second []time.Duration
	counts := map[string]int64{}
	for _, o := range outs {
		r.completed += o.completed
		r.Errors += o.errs
		if r.FirstError == "" {
			r.FirstError = o.firstErr
		}
		for _, s := range o.samples {
			if s.done.Before(open.at) || !s.done.Before(closed.at) {
				continue
			}
			all = append(all, s.lat)
			if s.second > 0 {
				second = append(second, s.second)
			}
			for k, v := range s.counts {
				counts[k] += v
			}
		}
	}
	r.Requests = int64(len(all))
	r.Seconds = closed.at.Sub(open.at).Seconds()
	if r.Seconds > 0 {
		r.RPS = float64(r.Requests) / r.Seconds
	}
	open.until(closed).apply(&r, r.Requests)
	slices.Sort(all)
	r.P50ms, r.P99ms = msOf(percentile(all, 0.50)), msOf(percentile(all, 0.99))
	if len(all) > 0 {
		r.MaxMs = msOf(all[len(all)-1])
	}
	if len(second) > 0 || len(counts) > 0 {
		r.Extra = map[string]float64{}
	}
	if len(second) > 0 {
		slices.Sort(second)
		r.Extra["second_p50_ms"], r.Extra["second_p99_ms"] = msOf(percentile(second, 0.50)), msOf(percentile(second, 0.99))
	}
	for k, v := range counts {
		r.Extra[k] = float64(v)
	}
	return r
}

// sleepUntil sleeps until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
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
