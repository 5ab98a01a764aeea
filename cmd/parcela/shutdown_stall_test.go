package main

import (
	"context"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stallProxy forwards TCP to target until stall is called; from then the
// connections stay open and carry nothing (a partition, a frozen server).
func stallProxy(t *testing.T, target string) (addr string, stall func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var stalled atomic.Bool
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if err != nil {
				return
			}
			for stalled.Load() {
				time.Sleep(10 * time.Millisecond)
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			go pipe(u, c)
			go pipe(c, u)
		}
	}()
	return ln.Addr().String(), func() { stalled.Store(true) }
}

// SIGTERM while PostgreSQL has stopped answering (a network partition, a
// frozen primary): the stop is bounded by PARCELA_SHUTDOWN_TIMEOUT and 10 s
// more for jobs to return. At 1s, serve returned after about 25 s: the
// database's close waited on pgxpool's close of every stalled connection
// (15 s each, in pgx), past an orchestrator's grace period (an audit).
func TestShutdownIsBoundedWhenPostgresStalls(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cli(t, dsn, "migrate")
	addr, stall := stallProxy(t, u.Host)
	u.Host = addr
	vars := map[string]string{
		"PARCELA_DATABASE_URL": u.String(), "PARCELA_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_ADDR": "127.0.0.1:0",
		"PARCELA_OPS_ADDR": "127.0.0.1:0", "PARCELA_SHUTDOWN_TIMEOUT": "1s",
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, env(vars), out, errb) }()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "operations "); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", errb.String())
		}
	}
	time.Sleep(2 * time.Second) // the job workers hold connections
	stall()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	cancel() // SIGTERM
	select {
	case err := <-done:
		if err != nil {
			t.Logf("serve returned %v", err)
		}
		if d := time.Since(start); d > 14*time.Second {
			t.Errorf("serve took %s to stop with PARCELA_SHUTDOWN_TIMEOUT=1s (the timeout, and 10 s more for jobs)", d.Round(time.Second))
		}
	case <-time.After(90 * time.Second):
		t.Fatal("serve did not stop within 90 s")
	}
}
