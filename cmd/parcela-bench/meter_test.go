package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lockHolderEnv names the "-shm" file a child of the test binary locks the
// way SQLite's writer does, until its stdin closes.
const lockHolderEnv = "PARCELA_BENCH_TEST_LOCK"

// lockHolderChild holds SQLite's WAL write lock on the file named by
// lockHolderEnv when the test binary runs as that child.
func lockHolderChild() bool {
	path := os.Getenv(lockHolderEnv)
	if path == "" {
		return false
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: walWriteLock, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	return true
}

// TestWriterProbe checks the probe against another process holding the
// write-lock byte, then releasing it.
func TestWriterProbe(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "x.db")
	if err := os.WriteFile(db+"-shm", make([]byte, 32<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := startWriterProbe(db)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	if held, err := p.locked(); err != nil || held {
		t.Fatalf("before any holder: held %v, %v", held, err)
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+db+"-shm")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		stdin.Close()
		_ = cmd.Wait()
		t.Fatalf("lock holder said %q, %v", line, err)
	}
	before := p.counts()
	// Until the loop has sampled a few times while the lock is held.
	for deadline := time.Now().Add(time.Minute); p.counts().samples-before.samples < 20 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	held, err := p.locked()
	after := p.counts()
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lock holder: %v", err)
	}
	if err != nil || !held {
		t.Fatalf("while another process holds byte %d: held %v, %v", walWriteLock, held, err)
	}
	n, h := after.samples-before.samples, after.held-before.held
	if n < 20 || h != n {
		t.Errorf("%d of %d samples saw the lock held, want all", h, n)
	}
	if held, err := p.locked(); err != nil || held {
		t.Errorf("after the holder exited: held %v, %v", held, err)
	}
}

func TestWriterProbeWithoutDatabase(t *testing.T) {
	t.Parallel()
	if p, err := startWriterProbe(""); p != nil || err != nil {
		t.Errorf("no path: %v, %v", p, err)
	}
	if _, err := startWriterProbe(filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("a database without its -shm file: no error")
	}
	var p *writerProbe
	if c := p.counts(); c != (writerCounts{}) {
		t.Errorf("nil probe counts %+v", c)
	}
	p.stop()
}

// TestSpent checks the arithmetic between two readings: CPU share, CPU per
// operation, and the writer's time per operation.
func TestSpent(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := reading{at: t0, ticks: 1000, cpuOK: true, writer: writerCounts{samples: 100, held: 10}}
	b := reading{at: t0.Add(2 * time.Second), ticks: 1300, cpuOK: true, writer: writerCounts{samples: 2100, held: 1510}}
	var r Result
	a.until(b).apply(&r, 600)
	// 3 s of CPU in 2 s: 150%; 3 s ÷ 600 = 5,000 µs; held 1,500 of 2,000
	// samples: 75% of 2 s ÷ 600 = 2,500 µs.
	if r.ServerCPU != 150 || r.ServerCPUSeconds != 3 || r.ServerCPUPerOpUS != 5000 {
		t.Errorf("CPU %v%%, %v s, %v µs/op", r.ServerCPU, r.ServerCPUSeconds, r.ServerCPUPerOpUS)
	}
	if r.Writer == nil || r.Writer.Samples != 2000 || r.Writer.BusyPercent != 75 || r.Writer.HeldPerOpUS != 2500 {
		t.Errorf("writer %+v", r.Writer)
	}

	// No operations, no probe, no CPU reading: nothing invented.
	var empty Result
	reading{at: t0}.until(reading{at: t0.Add(time.Second)}).apply(&empty, 0)
	if empty.ServerCPU != 0 || empty.ServerCPUSeconds != 0 || empty.ServerCPUPerOpUS != 0 || empty.Writer != nil || empty.CPU != nil {
		t.Errorf("empty window %+v", empty)
	}
}

// TestSpentByWho checks the machine's CPU per operation by who spent it.
func TestSpentByWho(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)
	a := reading{at: t0, ticks: 100, cpuOK: true, client: 50, clientOK: true, db: 7, dbOK: true, machine: 1000, busyOK: true}
	b := reading{at: t0.Add(2 * time.Second), ticks: 250, cpuOK: true, client: 110, clientOK: true, db: 147, dbOK: true, machine: 1380, busyOK: true}
	var r Result
	a.until(b).apply(&r, 1000)
	// 3.8 s of the machine in 2 s: 190%; per operation 3,800 µs, of it
	// the server's 1,500, the load's 600, the database's 1,400, the rest 300.
	want := MachineCPU{BusyPercent: 190, MachineUS: 3800, ServerUS: 1500, LoadUS: 600, DatabaseUS: 1400, HasDatabase: true, RestUS: 300}
	if r.CPU == nil || *r.CPU != want {
		t.Errorf("machine CPU %+v, want %+v", r.CPU, want)
	}

	// No database read (SQLite): none shown, the rest takes nothing of it.
	a.dbOK, b.dbOK = false, false
	a.until(b).apply(&r, 1000)
	want.DatabaseUS, want.HasDatabase, want.RestUS = 0, false, 1700
	if r.CPU == nil || *r.CPU != want {
		t.Errorf("without a database: %+v, want %+v", r.CPU, want)
	}

	// Without the machine's reading there is nothing to split.
	a.busyOK = false
	if a.until(b).apply(&r, 1000); r.CPU != nil {
		t.Errorf("without /proc/stat: %+v", r.CPU)
	}
}

// TestMachineAndCommTicks checks the two readings against this process:
// the machine's busy time and the time of the processes named as this one
// both move while it burns CPU, and the named processes' time is at least
// its own.
func TestMachineAndCommTicks(t *testing.T) {
	t.Parallel()
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSpace(string(comm))
	m0, err := machineBusyTicks()
	if err != nil {
		t.Fatal(err)
	}
	// Its own time read first: it only grows, so the sum read after it is
	// at least as large (read the other way round, a tick between the two
	// reads failed this).
	own, err := cpuTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	c0, err := commTicks(name)
	if err != nil || c0 < own {
		t.Fatalf("processes named %q: %d ticks, this one alone %d (%v)", name, c0, own, err)
	}
	if n, err := commTicks("no process has this name"); err != nil || n != 0 {
		t.Errorf("a name no process has: %d, %v", n, err)
	}
	x := 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		for i := range 1 << 20 {
			x += i
		}
		m1, err1 := machineBusyTicks()
		c1, err2 := commTicks(name)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if m1 > m0 && c1 > c0 {
			return
		}
	}
	t.Errorf("busy ticks never moved (%d)", x)
}

func TestLocalDatabase(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable": "postgres",
		"postgresql://u@localhost/db":                                 "postgres",
		"postgres://u@[::1]:5432/db":                                  "postgres",
		"postgres:///db?host=/var/run/postgresql":                     "postgres",
		"postgres://u@db.example.com/db":                              "",
		"postgres://u@10.0.0.5/db":                                    "",
		"file:/tmp/x.db?_pragma=busy_timeout(1000)":                   "",
		"/tmp/x.db": "",
	} {
		if got := localDatabase(dsn); got != want {
			t.Errorf("localDatabase(%q) = %q, want %q", dsn, got, want)
		}
	}
}

func TestCPUTicksOfThisProcess(t *testing.T) {
	t.Parallel()
	a, err := cpuTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the counter moves (it counts 10 ms ticks).
	x := 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		for i := range 1 << 20 {
			x += i
		}
		if b, err := cpuTicks(os.Getpid()); err != nil || b > a {
			return
		}
	}
	t.Errorf("the CPU ticks of a busy process never moved (%d)", x)
}

// TestPageScenario runs a page scenario against a stand-in for the pages
// (this process plays the server, so its own CPU is measured), and checks
// that a binary without the route is reported, not failed.
func TestPageScenario(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pay/{slug}/offers/{offer}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>%s</title>", r.PathValue("offer"))
	})
	mux.HandleFunc("GET /checkout/bills/{bill}", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("code") != "GOODCODE" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>checkout</title>")
	})
	pages := httptest.NewServer(mux)
	defer pages.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"code":"not_found"}`)
	}))
	defer api.Close()

	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{cfg: &config{warmup: 50 * time.Millisecond, duration: 300 * time.Millisecond, pageConns: 2}, logf: t.Logf}
	srv := &parcelaServer{child: &child{cmd: &exec.Cmd{Process: self}}, engine: "test"}
	s := &seeded{companySlug: "bench-0", offerID: "offer-1", openBills: []openBill{{"bill-1", "GOODCODE"}, {"bill-2", "GOODCODE"}}}

	for _, u := range [][]string{offerPageURLs(pages.URL, s), checkoutPageURLs(pages.URL, s)} {
		r := b.page(context.Background(), srv, "page", u)
		if !r.Available || r.Requests == 0 || r.Errors != 0 {
			t.Errorf("%s: available %v, %d requests, %d errors (%s)", u[0], r.Available, r.Requests, r.Errors, r.FirstError)
		}
		checkCPU(t, u[0], r)
	}
	// A page answered 404 by the page handler itself is a failure to see.
	bad := &seeded{openBills: []openBill{{"bill-1", "WRONG"}}}
	if r := b.page(context.Background(), srv, "page", checkoutPageURLs(pages.URL, bad)); !r.Available || r.Errors == 0 || r.Requests != 0 {
		t.Errorf("a page's own 404: available %v, %d requests, %d errors", r.Available, r.Requests, r.Errors)
	}
	// The API's router answering for a route it does not have.
	if r := b.page(context.Background(), srv, "page", offerPageURLs(api.URL, s)); r.Available || !strings.HasPrefix(r.Note, routeNotServed) {
		t.Errorf("an unrouted page: available %v, note %q", r.Available, r.Note)
	}
	if r := b.page(context.Background(), srv, "page", checkoutPageURLs(pages.URL, &seeded{})); r.Available || r.Note == "" {
		t.Errorf("no bills to ask for: %+v", r)
	}
}
