package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// lockTable locks table on dsn's database until the test ends, and
// returns a wait for a request to be stuck behind the lock.
func lockTable(t *testing.T, dsn, table string) (waitStuck func()) {
	t.Helper()
	ctx := context.Background()
	locker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locker.Close(context.Background()) })
	if _, err := locker.Exec(ctx, "BEGIN; LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var n int
			if err := locker.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE NOT granted").Scan(&n); err == nil && n > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the request never waited on the lock")
			}
		}
	}
}

// A request still waiting on the database when the shutdown timeout ends
// does not keep the process: its context is canceled then, so the pool it
// holds a connection of closes and serve returns. It is answered 503
// unavailable with Retry-After, which a client retries (on another
// instance, or after the restart), and logged as such: it was answered
// 499, the status of a client that left, which its client was there to
// read, and which an integrator following the production guide does not
// retry (a 4xx).
func TestShutdownAnswersTheRequestsItCancels503(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	ts := startServer(t, dsn, map[string]string{"PARCELA_SHUTDOWN_TIMEOUT": "500ms"})
	_, _, token := newCompanyToken(t, dsn, "sandbox")
	waitStuck := lockTable(t, dsn, "tokens")
	type answer struct {
		status     int
		retryAfter string
		err        error
	}
	answered := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("GET", ts.sandbox+"/external_api/v1/offers", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		resp.Body.Close()
		answered <- answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	}()
	waitStuck()
	ts.stop() // fails the test if serve has not returned within 30 s
	select {
	case a := <-answered:
		if a.err != nil || a.status != http.StatusServiceUnavailable || a.retryAfter == "" {
			t.Errorf("the canceled request was answered %d (Retry-After %q), %v; want 503 with Retry-After", a.status, a.retryAfter, a.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the request in flight was never answered")
	}
	if strings.Contains(ts.stderr.String(), `"client_gone":true`) {
		t.Errorf("the canceled request was logged as its client's leaving:\n%s", ts.stderr)
	}
}

// The payer's pages too: a page the shutdown cancels is the 503 page, as a
// database that does not answer makes it, not the 500 of a failed page
// logged as an error.
func TestShutdownAnswersThePagesItCancels503(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	ts := startServer(t, dsn, map[string]string{"PARCELA_SHUTDOWN_TIMEOUT": "500ms"}, "--demo")
	var page string
	for _, line := range strings.Split(ts.stdout.String(), "\n") {
		if u, ok := strings.CutPrefix(line, "offer page: "); ok {
			page = u
		}
	}
	if page == "" {
		t.Fatalf("no offer page in:\n%s", ts.stdout)
	}
	waitStuck := lockTable(t, dsn, "offers")
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Get(page)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	waitStuck()
	ts.stop()
	select {
	case status := <-answered:
		if status != http.StatusServiceUnavailable {
			t.Errorf("the canceled page was answered %d; want 503", status)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the page in flight was never answered")
	}
	if strings.Contains(ts.stderr.String(), `"msg":"page failed"`) {
		t.Errorf("the canceled page was logged as failed:\n%s", ts.stderr)
	}
}
