package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// The baseline is a bare net/http server writing a bill-sized JSON body
// (a real GET /bills/{id} response), in its own process like parcela, so
// the client, the connections and the process layout are the same and the
// ratio shows what parcela's work costs on top of HTTP itself.

// baselineEnv names the body file when this program runs as the baseline
// server (re-executed by the harness; the test binary does the same from
// TestMain).
const baselineEnv = "PARCELA_BENCH_BASELINE_BODY"

// baselineChild serves the baseline when the process was started as one,
// and reports whether it did.
func baselineChild() bool {
	path := os.Getenv(baselineEnv)
	if path == "" {
		return false
	}
	if err := serveBaseline(path); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
	return true
}

func serveBaseline(path string) error {
	body, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	length := strconv.Itoa(len(body))
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", length)
		w.Write(body)
	})}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	fmt.Printf("baseline http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startBaseline re-executes this program as the baseline server.
func startBaseline(ctx context.Context, bodyPath string) (*child, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	c, addrs, err := startChild(ctx, self, nil, []string{baselineEnv + "=" + bodyPath}, []string{"baseline"})
	if err != nil {
		return nil, "", err
	}
	return c, addrs["baseline"], nil
}

// baselineOp is a GET with the same headers the API scenarios send.
func baselineOp(url, token string) op {
	return func(ctx context.Context, w *worker) (time.Duration, error) {
		t0 := time.Now()
		_, err := w.do(ctx, "GET", url, token, nil, 200)
		return time.Since(t0), err
	}
}
