package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildParcela builds ./cmd/parcela of the module the harness runs in.
func buildParcela(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run parcela-bench inside the parcela module (or pass --parcela-bin)")
	}
	bin := filepath.Join(dir, "parcela")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/parcela")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/parcela: %v\n%s", err, out)
	}
	return bin, nil
}

// child is a process the harness started and stops.
type child struct {
	cmd    *exec.Cmd
	stderr *tail
	done   chan struct{}
	err    error
}

// tail keeps the last bytes a process wrote, for error messages.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 16<<10 {
		t.b = append(t.b[:0], t.b[len(t.b)-8<<10:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}

// startChild runs path with env added to the harness's environment and
// returns the addresses it prints as "NAME http://ADDR" lines, once every
// name in want has been printed.
func startChild(ctx context.Context, path string, args, env, want []string) (*child, map[string]string, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	c := &child{cmd: cmd, stderr: &tail{}, done: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	addrs := make(chan [2]string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if name, url, ok := strings.Cut(sc.Text(), " "); ok && strings.HasPrefix(url, "http://") {
				select {
				case addrs <- [2]string{name, url}:
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	got := map[string]string{}
	timeout := time.NewTimer(2 * time.Minute)
	defer timeout.Stop()
	for {
		missing := false
		for _, w := range want {
			if got[w] == "" {
				missing = true
			}
		}
		if !missing {
			return c, got, nil
		}
		select {
		case a := <-addrs:
			got[a[0]] = a[1]
		case <-c.done:
			return nil, nil, fmt.Errorf("%s exited early: %v\n%s", filepath.Base(path), c.err, c.stderr.String())
		case <-timeout.C:
			_ = c.stop()
			return nil, nil, fmt.Errorf("%s printed no addresses in 2 minutes\n%s", filepath.Base(path), c.stderr.String())
		case <-ctx.Done():
			_ = c.stop()
			return nil, nil, ctx.Err()
		}
	}
}

// stop asks the process to drain and exit, and kills it after 30 s.
func (c *child) stop() error {
	select {
	case <-c.done:
		return c.err
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return c.err
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
		return errors.New("did not stop within 30 s of SIGTERM; killed")
	}
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// parcelaServer is a running `parcela serve`.
type parcelaServer struct {
	*child
	sandbox, production, ops string
	engine                   string
	dsn                      string // the database it serves
	sqlitePath               string // the database file on SQLite
	// dbComm is the command name of the database's processes when they
	// run on this machine (PostgreSQL at a local address), so their CPU is
	// measured beside the server's; "" otherwise.
	dbComm string
}

func startParcela(ctx context.Context, bin, dsn string, rateLimit int) (*parcelaServer, error) {
	limit := strconv.Itoa(rateLimit)
	env := []string{
		"PARCELA_DATABASE_URL=" + dsn,
		// Port 0: the server prints the addresses it got.
		"PARCELA_ADDR=127.0.0.1:0", "PARCELA_SANDBOX_ADDR=127.0.0.1:0", "PARCELA_OPS_ADDR=127.0.0.1:0",
		"PARCELA_RATE_LIMIT=" + limit, "PARCELA_SANDBOX_RATE_LIMIT=" + limit, "PARCELA_LOG_LEVEL=error",
		// The page scenarios load the pages from one address, as no payer does.
		"PARCELA_PAGE_RATE_LIMIT=0",
		"PARCELA_WEBHOOK_ALLOWED_CIDRS=127.0.0.0/8",
	}
	c, addrs, err := startChild(ctx, bin, []string{"serve"}, env, []string{"production", "sandbox", "operations"})
	if err != nil {
		return nil, err
	}
	s := &parcelaServer{child: c, sandbox: addrs["sandbox"], production: addrs["production"], ops: addrs["operations"], dsn: dsn, dbComm: localDatabase(dsn)}
	if err := waitHealthy(ctx, s.sandbox+"/readyz"); err != nil {
		_ = c.stop()
		return nil, fmt.Errorf("%w\n%s", err, c.stderr.String())
	}
	return s, nil
}

func waitHealthy(ctx context.Context, url string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s never answered 200: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settle waits until the server is idle (its start-up sweeps are done):
// under 5% of a core over half a second, for at most max.
func settle(ctx context.Context, pid int, max time.Duration) (time.Duration, error) {
	start := time.Now()
	prev, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	for time.Since(start) < max {
		select {
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		cur, err := cpuTicks(pid)
		if err != nil {
			return time.Since(start), err
		}
		// 100 ticks a second on Linux: 5% of 0.5 s is 2.5 ticks.
		if cur-prev <= 2 {
			return time.Since(start), nil
		}
		prev = cur
	}
	return time.Since(start), nil
}

// peakRSS is the process's peak resident set (VmHWM) in MiB.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// resetPeakRSS starts a new VmHWM window (Linux ≥ 4.0); where that is not
// allowed the peak stays the process's lifetime peak.
func resetPeakRSS(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// cpuProfile fetches a CPU profile of seconds from the server's ops
// listener into path.
func cpuProfile(ctx context.Context, ops string, seconds int, path string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", ops, seconds), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("profile: status %d", resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// localDatabase is "postgres" when dsn is a PostgreSQL URL whose server
// runs on this machine (a loopback address or a socket), and "" otherwise:
// SQLite runs inside the server, and a remote database's CPU is not ours
// to read.
func localDatabase(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return ""
	}
	host := u.Hostname()
	if host == "" || host == "localhost" || strings.HasPrefix(host, "/") {
		return "postgres"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return "postgres"
	}
	return ""
}
