package main

import (
	"database/sql"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// On SIGTERM every listener stops taking requests at once, while the ones
// in flight drain: where the listeners were shut one after another, the
// sandbox and operations listeners kept serving new requests for as long
// as a production request was in flight.
func TestShutdownClosesEveryListenerAtOnce(t *testing.T) {
	t.Parallel()
	ts := startServer(t, tempDSN(t), map[string]string{"PARCELA_READ_HEADER_TIMEOUT": "3s"})
	// A production request in flight: its headers are not all sent.
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.prod, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: parcela\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the server has read it
	stopped := make(chan struct{})
	go func() { ts.stop(); close(stopped) }()
	time.Sleep(300 * time.Millisecond) // the signal is taken
	client := &http.Client{Timeout: time.Second}
	for _, base := range []string{ts.sandbox, ts.ops} {
		if resp, err := client.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			t.Errorf("%s answered %d after the signal, while a production request drained", base, resp.StatusCode)
		}
	}
	select {
	case <-stopped:
		t.Fatal("serve stopped before its request in flight ended")
	default:
	}
	<-stopped
}

// A stop with nothing in flight says nothing is cut short, whatever
// PARCELA_SHUTDOWN_TIMEOUT is: at 0 (no wait) an idle server warned
// "requests still running at the shutdown deadline" of requests it did
// not have, which sent an operator looking for the ones it lost, and
// "jobs still running" of jobs alike.
func TestIdleShutdownWithNoWaitWarnsOfNoRequest(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	ts := startServer(t, dsn, map[string]string{"PARCELA_SHUTDOWN_TIMEOUT": "0"})
	waitJobsIdle(t, dsn)
	ts.stop()
	if log := ts.stderr.String(); strings.Contains(log, "requests still running") || strings.Contains(log, "jobs still running") {
		t.Errorf("an idle server's stop warned of requests or jobs still running:\n%s", log)
	}
}

// waitJobsIdle waits until the server at SQLite dsn has run the sweeps it
// runs at its start: a stop while one runs cuts it short, and says so.
// Idle is a job completed and none available or running, seen twice.
func waitJobsIdle(t *testing.T, dsn string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(dsn, "sqlite:")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seen := 0
	for deadline := time.Now().Add(30 * time.Second); seen < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the start-up sweeps did not end in 30 s")
		}
		var done, busy int
		err := db.QueryRow(`SELECT COUNT(*) FILTER (WHERE state = 'completed'), COUNT(*) FILTER (WHERE state IN ('available', 'running')) FROM river_job`).Scan(&done, &busy)
		if err != nil || done == 0 || busy > 0 {
			seen = 0
			continue
		}
		seen++
	}
}
