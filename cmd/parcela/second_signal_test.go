package main

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMainChild is not a test: it is the real main(), signal handling
// included, run by TestSecondSignalStopsAtOnce in a process of its own.
func TestMainChild(t *testing.T) {
	if os.Getenv("PARCELA_TEST_MAIN_CHILD") == "" {
		t.Skip("runs only as the child of TestSecondSignalStopsAtOnce")
	}
	os.Args = []string{"parcela", "serve"}
	main()
}

// An operator who sends SIGTERM (or presses Ctrl-C) again while the
// graceful stop waits for a request in flight stops the process at once:
// the second signal was caught and dropped, and the process waited out
// PARCELA_SHUTDOWN_TIMEOUT (up to ten minutes) and the jobs' 10 s.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainChild$")
	cmd.Env = append(os.Environ(), "PARCELA_TEST_MAIN_CHILD=1",
		"PARCELA_DATABASE_URL="+filepath.Join(t.TempDir(), "p.db"),
		"PARCELA_ADDR=127.0.0.1:0", "PARCELA_SANDBOX_ADDR=127.0.0.1:0", "PARCELA_OPS_ADDR=127.0.0.1:0",
		"PARCELA_READ_HEADER_TIMEOUT=60s", "PARCELA_SHUTDOWN_TIMEOUT=60s", "PARCELA_LOG_LEVEL=error")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	prod := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "production http://"); ok {
				prod <- a
			}
		}
	}()
	var addr string
	select {
	case addr = <-prod:
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not start")
	}
	// A request whose headers are not all sent holds the graceful stop.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: parcela\r\n")); err != nil {
		t.Fatal(err)
	}
	// The server holds the stop only for a connection it has accepted; a
	// signal sent while this one still waited in the kernel's queue ended
	// the process at once, under load. Connections are accepted in the
	// order they came, so once a later one is answered this one is held.
	later, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}).Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	later.Body.Close()
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // its ProcessState says how it ended
		close(exited)
	}()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The first signal stops gracefully: the process waits for the request.
	select {
	case <-exited:
		t.Fatalf("the first signal ended the process at once (%v); it should wait for the request in flight", cmd.ProcessState)
	case <-time.After(time.Second):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Ended by the signal itself, not by the graceful stop's own end
	// (which comes once the server drops the unfinished request as idle,
	// seconds later, or at PARCELA_SHUTDOWN_TIMEOUT).
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("a second SIGTERM did not stop the process: it still waits for PARCELA_SHUTDOWN_TIMEOUT (60s here)")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("the process ended %v, not by the second SIGTERM", cmd.ProcessState)
	}
}
