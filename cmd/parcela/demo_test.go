package main

import (
	"bytes"
	"context"
	"database/sql"
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

// A demo whose setup fails halfway (here its offer, refused by the
// database as a full disk or a kill -9 would cut it) leaves nothing
// behind: the next `demo` (or `serve --demo`) sets it up whole. Its steps
// committed one by one, the company and its token stayed without a
// product or offer, and every later start took the database for one
// already set up ("the database already has a company"), the token it
// made never shown to anyone.
func TestDemoFailedHalfwayIsSetUpWholeNextTime(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	cli(t, dsn, "migrate")
	raw, err := sql.Open("sqlite", strings.TrimPrefix(dsn, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER demo_offer_fails BEFORE INSERT ON offers BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`); err != nil {
		t.Fatal(err)
	}
	vars := env(map[string]string{"PARCELA_DATABASE_URL": dsn})
	if err := run(context.Background(), []string{"demo"}, vars, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Fatal("the demo was set up though its offer could not be stored")
	}
	if _, err := raw.Exec(`DROP TRIGGER demo_offer_fails`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := raw.QueryRow(`SELECT (SELECT COUNT(*) FROM companies) + (SELECT COUNT(*) FROM tokens) + (SELECT COUNT(*) FROM products)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the failed demo left %d rows of companies, tokens and products", n)
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"demo"}, vars, &out, &errb); err != nil {
		t.Fatalf("demo after a failed one: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "sandbox token (shown once): sandbox_") || !strings.Contains(out.String(), "offer page: ") {
		t.Fatalf("demo printed:\n%s", out.String())
	}
}

// `parcela demo` prints its links as serve makes them: a public address
// given with a trailing slash, which serve takes (it trims it), printed
// "https://sandbox.example.com//pay/demo/offers/…", a path the pages do
// not serve (404), and the curl line's "//external_api/v1/…" alike.
func TestDemoLinksTakeAPublicURLWithATrailingSlash(t *testing.T) {
	t.Parallel()
	vars := env(map[string]string{"PARCELA_DATABASE_URL": tempDSN(t), "PARCELA_SANDBOX_PUBLIC_URL": "https://sandbox.example.com/"})
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"demo"}, vars, &out, &errb); err != nil {
		t.Fatalf("demo: %v\n%s", err, errb.String())
	}
	if strings.Contains(out.String(), ".com//") || !strings.Contains(out.String(), "offer page: https://sandbox.example.com/pay/demo/offers/") ||
		!strings.Contains(out.String(), " https://sandbox.example.com/external_api/v1/offers/") {
		t.Errorf("demo printed:\n%s", out.String())
	}
}

// With no public address, the links name the sandbox listener's address
// as this machine reaches it: ":8081" (every interface) printed
// "http://:8081/…", which neither a browser nor curl opens.
func TestDemoLinksOfAListenerOnEveryInterface(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{":8081": "http://127.0.0.1:8081/", "0.0.0.0:9000": "http://127.0.0.1:9000/",
		"[::]:8082": "http://127.0.0.1:8082/", "[::1]:8083": "http://[::1]:8083/", "10.1.2.3:8084": "http://10.1.2.3:8084/"} {
		vars := env(map[string]string{"PARCELA_DATABASE_URL": tempDSN(t), "PARCELA_SANDBOX_ADDR": addr})
		var out, errb bytes.Buffer
		if err := run(context.Background(), []string{"demo"}, vars, &out, &errb); err != nil {
			t.Fatalf("demo: %v\n%s", err, errb.String())
		}
		if !strings.Contains(out.String(), "offer page: "+want+"pay/demo/offers/") || !strings.Contains(out.String(), " "+want+"external_api/v1/offers/") {
			t.Errorf("%s: demo printed:\n%s", addr, out.String())
		}
	}
}
