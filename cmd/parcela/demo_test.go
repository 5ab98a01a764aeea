package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// `serve --demo` started several times at once on one new PostgreSQL
// database (instances of one deployment) starts every time: one sets up
// the demo and prints its token, the others find it there, where all but
// one stopped with "a company with slug demo already exists". (A SQLite
// file is served by one process: TestSecondServeOnOneSQLiteFileIsRefused.)
//
// Not parallel: it sets demoCounted, which every start in the process reads.
func TestServeDemoStartedTwiceAtOnce(t *testing.T) {
	dsn := freshPostgres(t)
	const n = 3
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	// Every start counts no company before any creates one.
	demoCounted = func() {
		mu.Lock()
		if arrived++; arrived == n {
			close(all)
		}
		mu.Unlock()
		<-all
	}
	t.Cleanup(func() { demoCounted = nil })
	vars := env(map[string]string{"PARCELA_DATABASE_URL": dsn, "PARCELA_ADDR": "127.0.0.1:0",
		"PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	outs := make([]*syncBuffer, n)
	errs := make([]error, n)
	done := make([]chan struct{}, n)
	for i := range n {
		outs[i], done[i] = &syncBuffer{}, make(chan struct{})
		go func() {
			defer close(done[i])
			errs[i] = run(ctx, []string{"serve", "--demo"}, vars, outs[i], &syncBuffer{})
		}()
	}
	// A start serves once it prints its operations listener, or has stopped.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < n && time.Now().Before(deadline); {
		select {
		case <-done[i]:
			i++
			continue
		default:
		}
		if strings.Contains(outs[i].String(), "operations http://") {
			i++
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	for i := range n {
		<-done[i]
	}
	tokens := 0
	for i := range n {
		out := outs[i].String()
		if errs[i] != nil || !strings.Contains(out, "operations http://") {
			t.Errorf("start %d: %v\n%s", i, errs[i], out)
		}
		if strings.Contains(out, "sandbox token (shown once): sandbox_") {
			tokens++
		} else if !strings.Contains(out, "demo: the database already has a company; nothing created") {
			t.Errorf("start %d printed neither the demo nor that it was there:\n%s", i, out)
		}
	}
	if tokens != 1 {
		t.Errorf("%d demo tokens printed, want 1", tokens)
	}
}

// A signal during the demo's setup (a Ctrl-C right after the start) lets
// it finish: a company left without its token or offer would be taken by
// every later start for a database already set up.
//
// Not parallel: it sets demoCounted.
func TestServeDemoFinishesAcrossASignal(t *testing.T) {
	dsn := tempDSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	demoCounted = cancel // the signal arrives as the setup begins
	t.Cleanup(func() { demoCounted = nil })
	out := &syncBuffer{}
	err := run(ctx, []string{"serve", "--demo"}, env(map[string]string{"PARCELA_DATABASE_URL": dsn, "PARCELA_ADDR": "127.0.0.1:0",
		"PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"}), out, &syncBuffer{})
	if err != nil || !strings.Contains(out.String(), "sandbox token (shown once): sandbox_") || !strings.Contains(out.String(), "offer page: ") {
		t.Fatalf("serve --demo stopped by a signal: %v\n%s", err, out)
	}
	if list := cli(t, dsn, "company", "list"); !strings.Contains(list, "demo") {
		t.Fatalf("no demo company:\n%s", list)
	}
}
