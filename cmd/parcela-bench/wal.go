package main

import (
	"context"
	"os"
	"sync"
	"time"
)

// The WAL bound: the charge scenario sustained for --wal-duration (5
// minutes) on SQLite while the harness samples the size of the database's
// "-wal" file, reporting the peak and the final size beside the charge
// throughput. The server restarts its log past a quarter of walBound; the
// file keeps the longest length the log had, so its size is the peak.

const (
	// walBound is the size the server keeps SQLite's write-ahead log under.
	walBound = 64 << 20
	// walSampleEvery is finer than the checkpointer's quarter-second tick,
	// so the log's top between two checkpoints is seen.
	walSampleEvery = 100 * time.Millisecond
)

// WALSizes is what sampling the "-wal" file saw, from the start of the
// warm-up to the end of the run.
type WALSizes struct {
	BoundBytes    int64   `json:"bound_bytes"`
	PeakBytes     int64   `json:"peak_bytes"`
	PeakAtSeconds float64 `json:"peak_at_seconds"`
	FinalBytes    int64   `json:"final_bytes"`
	Samples       int     `json:"samples"`
	OverBound     int     `json:"samples_over_bound"`
	// PerSecondPeakBytes is the largest sample of each second of the run.
	PerSecondPeakBytes []int64 `json:"per_second_peak_bytes"`
	RunSeconds         float64 `json:"run_seconds"`
	DatabaseBytes      int64   `json:"database_bytes"`
}

// walSampler samples a file's size until stopped.
type walSampler struct {
	path       string
	start      time.Time
	mu         sync.Mutex
	sizes      WALSizes
	quit, done chan struct{}
}

func sampleWAL(path string) *walSampler {
	w := &walSampler{path: path, start: time.Now(), sizes: WALSizes{BoundBytes: walBound}, quit: make(chan struct{}), done: make(chan struct{})}
	w.sample()
	go func() {
		defer close(w.done)
		t := time.NewTicker(walSampleEvery)
		defer t.Stop()
		for {
			select {
			case <-w.quit:
				return
			case <-t.C:
				w.sample()
			}
		}
	}()
	return w
}

func (w *walSampler) sample() {
	var size int64
	if st, err := os.Stat(w.path); err == nil {
		size = st.Size()
	}
	at := time.Since(w.start)
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &w.sizes
	s.Samples++
	s.FinalBytes = size
	if size > s.PeakBytes {
		s.PeakBytes, s.PeakAtSeconds = size, at.Seconds()
	}
	if size >= walBound {
		s.OverBound++
	}
	sec := int(at / time.Second)
	for len(s.PerSecondPeakBytes) <= sec {
		s.PerSecondPeakBytes = append(s.PerSecondPeakBytes, 0)
	}
	s.PerSecondPeakBytes[sec] = max(s.PerSecondPeakBytes[sec], size)
}

// stop ends the sampling with a last sample, the final size.
func (w *walSampler) stop() WALSizes {
	close(w.quit)
	<-w.done
	w.sample()
	w.sizes.RunSeconds = time.Since(w.start).Seconds()
	return w.sizes
}

// wal runs the sustained charge scenario with the log sampled; on another
// engine it is reported unavailable.
func (b *bench) wal(ctx context.Context, srv *parcelaServer, s *seeded) Result {
	if srv.sqlitePath == "" {
		return Result{Name: scWAL, Note: "SQLite only"}
	}
	b.logf("%s: %s, %d connections for %s", srv.engine, scWAL, b.cfg.chargeConns, b.cfg.walDuration)
	sampler := sampleWAL(srv.sqlitePath + "-wal")
	r := b.measure(ctx, srv, scenario{name: scWAL, conns: b.cfg.chargeConns, op: chargeOp(srv.sandbox, s.token, s.offerID, s.financedID),
		duration: b.cfg.walDuration, writes: true})
	sizes := sampler.stop()
	if st, err := os.Stat(srv.sqlitePath); err == nil {
		sizes.DatabaseBytes = st.Size()
	}
	r.WAL = &sizes
	logResult(b.logf, srv.engine, r)
	b.logf("%s:   WAL peak %.1f MB at %.0f s, final %.1f MB, %d of %d samples at or over %.0f MB", srv.engine, mb(sizes.PeakBytes),
		sizes.PeakAtSeconds, mb(sizes.FinalBytes), sizes.OverBound, sizes.Samples, mb(walBound))
	return r
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
