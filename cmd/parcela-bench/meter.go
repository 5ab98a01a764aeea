package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// What the server spent in a measured window: its CPU time, read from
// /proc/PID/stat at the window's two edges, and, on SQLite, how much of the
// window its single writer held the database's write lock.

// userHZ is the unit of the times in /proc/PID/stat (USER_HZ, 100 on every
// Linux architecture the harness runs on).
const userHZ = 100

// cpuTicks is the process's user+system CPU time in clock ticks, its
// threads' (living and exited) together.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s, nil
}

// machineBusyTicks is the time all the machine's CPUs spent busy, in
// clock ticks, from the first line of /proc/stat: user, nice, system, irq,
// softirq and steal (a guest's time is inside user).
func machineBusyTicks() (int64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, errors.New("no cpu line in /proc/stat")
	}
	var busy int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, err
		}
		busy += n
	}
	return busy, nil
}

// commTicks is the CPU time, in clock ticks, of every process whose
// command name is comm: for "postgres", the database's backends and its
// background processes. A process that exits between two readings takes
// its time with it, so a figure is a floor; PostgreSQL's backends live as
// long as the server's pool.
func commTicks(comm string) (int64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone since the listing
		}
		open, shut := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || shut < open || string(b[open+1:shut]) != comm {
			continue
		}
		if t, err := cpuTicks(pid); err == nil {
			total += t
		}
	}
	return total, nil
}

// reading is the counters at one instant: the server's CPU time, this
// process's (the load generator's), the database's when it runs on this
// machine as processes named dbComm, all CPUs' busy time, and the writer
// probe's samples.
type reading struct {
	at                     time.Time
	ticks                  int64
	cpuOK                  bool
	client, db, machine    int64
	clientOK, dbOK, busyOK bool
	writer                 writerCounts
}

// readServer reads pid's CPU time, this process's, the processes named
// dbComm ("" for none), the machine's and p's samples (p may be nil, pid 0).
func readServer(pid int, p *writerProbe, dbComm string) reading {
	r := reading{writer: p.counts()}
	if pid > 0 {
		t, err := cpuTicks(pid)
		r.ticks, r.cpuOK = t, err == nil
	}
	t, err := cpuTicks(os.Getpid())
	r.client, r.clientOK = t, err == nil
	if dbComm != "" {
		t, err := commTicks(dbComm)
		r.db, r.dbOK = t, err == nil
	}
	t, err = machineBusyTicks()
	r.machine, r.busyOK = t, err == nil
	r.at = time.Now()
	return r
}

// spent is what the server, the load generator, the database and the
// whole machine used between two readings (a time is negative when its
// readings failed).
type spent struct {
	seconds    float64 // wall time
	cpuSeconds float64
	cpuOK      bool
	writer     writerCounts
	// Seconds of CPU, -1 when not read.
	clientSeconds, dbSeconds, machineSeconds float64
}

func (a reading) until(b reading) spent {
	secs := func(ok bool, from, to int64) float64 {
		if !ok {
			return -1
		}
		return float64(to-from) / userHZ
	}
	return spent{
		seconds:        b.at.Sub(a.at).Seconds(),
		cpuSeconds:     float64(b.ticks-a.ticks) / userHZ,
		cpuOK:          a.cpuOK && b.cpuOK,
		writer:         writerCounts{samples: b.writer.samples - a.writer.samples, held: b.writer.held - a.writer.held},
		clientSeconds:  secs(a.clientOK && b.clientOK, a.client, b.client),
		dbSeconds:      secs(a.dbOK && b.dbOK, a.db, b.db),
		machineSeconds: secs(a.busyOK && b.busyOK, a.machine, b.machine),
	}
}

// cpuPercent is the CPU used in % of one core.
func (s spent) cpuPercent() float64 {
	if !s.cpuOK || s.seconds <= 0 {
		return 0
	}
	return 100 * s.cpuSeconds / s.seconds
}

// perOp is the CPU per operation in µs (0 without operations).
func (s spent) perOp(ops float64) float64 {
	if !s.cpuOK || ops <= 0 {
		return 0
	}
	return s.cpuSeconds * 1e6 / ops
}

// share is the writer's part of the window, and the writer time per
// operation in µs; nil when the window was not probed.
func (s spent) share(ops float64) *WriterShare {
	if s.writer.samples == 0 {
		return nil
	}
	busy := float64(s.writer.held) / float64(s.writer.samples)
	w := &WriterShare{Samples: s.writer.samples, BusyPercent: 100 * busy}
	if ops > 0 {
		w.HeldPerOpUS = busy * s.seconds * 1e6 / ops
	}
	return w
}

// apply fills r's server columns for ops operations done in the window.
func (s spent) apply(r *Result, ops int64) {
	r.ServerCPU = s.cpuPercent()
	if s.cpuOK {
		r.ServerCPUSeconds = s.cpuSeconds
	}
	r.ServerCPUPerOpUS = s.perOp(float64(ops))
	r.Writer = s.share(float64(ops))
	r.CPU = s.machineShare(float64(ops))
}

// machineShare is the window's CPU per operation by who spent it; nil
// without operations or without the machine's reading.
func (s spent) machineShare(ops float64) *MachineCPU {
	if ops <= 0 || s.machineSeconds < 0 || s.seconds <= 0 {
		return nil
	}
	perOp := func(secs float64) float64 { return max(0, secs) * 1e6 / ops }
	m := &MachineCPU{
		BusyPercent: 100 * s.machineSeconds / s.seconds,
		MachineUS:   perOp(s.machineSeconds),
		LoadUS:      perOp(s.clientSeconds),
		DatabaseUS:  perOp(s.dbSeconds),
		HasDatabase: s.dbSeconds >= 0,
		ServerUS:    s.perOp(ops),
	}
	m.RestUS = max(0, m.MachineUS-m.ServerUS-m.LoadUS-m.DatabaseUS)
	return m
}

// MachineCPU is where the whole machine's CPU went in a window, per
// operation: the server, the load generator (this process, so also the
// webhook receiver and the SQLite writer probe where they run), the
// database when it runs here (PostgreSQL's processes), and the rest (the
// kernel's own threads, other processes). On a machine the load generator shares,
// a closed loop's rate is about the cores ÷ MachineUS, so this shows what
// a throughput target is bound by.
type MachineCPU struct {
	// BusyPercent is all CPUs' busy time over the window, in % of one
	// core (200 is two cores saturated).
	BusyPercent float64 `json:"busy_percent"`
	MachineUS   float64 `json:"machine_us_per_op"`
	ServerUS    float64 `json:"server_us_per_op"`
	LoadUS      float64 `json:"load_generator_us_per_op"`
	DatabaseUS  float64 `json:"database_us_per_op,omitempty"`
	HasDatabase bool    `json:"database_measured"`
	RestUS      float64 `json:"rest_us_per_op"`
}

// WriterShare is how much of a window SQLite's writer held the write lock.
type WriterShare struct {
	Samples     int64   `json:"samples"`
	BusyPercent float64 `json:"busy_percent"`
	// HeldPerOpUS is busy share × window ÷ operations: the writer time
	// each operation cost, background writes included.
	HeldPerOpUS float64 `json:"held_us_per_op"`
}

// writerCounts are a probe's samples so far and how many saw the lock held.
type writerCounts struct{ samples, held int64 }

// writerProbe samples whether another process holds SQLite's write lock on
// a database in WAL mode. A write transaction holds an exclusive fcntl lock
// on byte 120 of the "-shm" file (WAL_WRITE_LOCK, taken at BEGIN IMMEDIATE,
// released at COMMIT or ROLLBACK; a RESTART checkpoint takes it too).
// F_GETLK asks the kernel whether a lock conflicts without taking one, so
// the server is never made to wait. Sampled at exponentially distributed
// intervals, the fraction of samples that find the lock held estimates the
// fraction of time it was held.
type writerProbe struct {
	f *os.File
	// packed holds both counts in one word, samples in the high half and
	// those that found the lock held in the low, so that a reader sees
	// them from the same moment: read apart, a sample between the two
	// reads counted in one and not the other (21 held of 20 samples).
	packed     atomic.Uint64
	stopOnce   sync.Once
	quit, done chan struct{}
}

// walWriteLock is the byte SQLite's unix VFS locks for WAL_WRITE_LOCK:
// UNIX_SHM_BASE = (22 + SQLITE_SHM_NLOCK) × 4, and the write lock is the
// first of the eight.
const walWriteLock = 120

// probeMeanInterval spaces the samples: about 1,000 a second, a syscall
// each.
const probeMeanInterval = time.Millisecond

// startWriterProbe probes the database at path (a SQLite file in WAL mode
// that a server has open); it returns nil when path is empty and an error
// when the lock cannot be queried.
func startWriterProbe(path string) (*writerProbe, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path + "-shm")
	if err != nil {
		return nil, err
	}
	p := &writerProbe{f: f, quit: make(chan struct{}), done: make(chan struct{})}
	if _, err := p.locked(); err != nil {
		f.Close()
		return nil, fmt.Errorf("F_GETLK on %s-shm: %w", path, err)
	}
	go p.loop()
	return p, nil
}

// locked reports whether another process holds the write lock.
func (p *writerProbe) locked() (bool, error) {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: walWriteLock, Len: 1}
	if err := syscall.FcntlFlock(p.f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return false, err
	}
	return lk.Type != syscall.F_UNLCK, nil
}

func (p *writerProbe) loop() {
	defer close(p.done)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
		}
		held, err := p.locked()
		if err != nil {
			return
		}
		sample := uint64(1) << 32
		if held {
			sample++
		}
		p.packed.Add(sample)
		t.Reset(time.Duration(rng.ExpFloat64() * float64(probeMeanInterval)))
	}
}

func (p *writerProbe) counts() writerCounts {
	if p == nil {
		return writerCounts{}
	}
	c := p.packed.Load()
	return writerCounts{samples: int64(c >> 32), held: int64(c & (1<<32 - 1))}
}

func (p *writerProbe) stop() {
	if p == nil {
		return
	}
	p.stopOnce.Do(func() {
		close(p.quit)
		<-p.done
		p.f.Close()
	})
}
