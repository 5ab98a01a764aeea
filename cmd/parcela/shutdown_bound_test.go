package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A request still waiting on the database when the shutdown timeout ends
// does not keep the process: its context is canceled then, so the pool it
// holds a connection of closes and serve returns.
func TestShutdownEndsRequestsStuckInTheDatabase(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	ts := startServer(t, dsn, map[string]string{"PARCELA_SHUTDOWN_TIMEOUT": "500ms"})
	_, _, token := newCompanyToken(t, dsn, "sandbox")
	ctx := context.Background()
	locker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locker.Close(context.Background()) })
	if _, err := locker.Exec(ctx, "BEGIN; LOCK TABLE tokens IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		req, _ := http.NewRequest("GET", ts.sandbox+"/external_api/v1/offers", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	// The request is waiting on the lock.
	waiting := func() bool {
		var n int
		err := locker.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE NOT granted").Scan(&n)
		return err == nil && n > 0
	}
	for deadline := time.Now().Add(10 * time.Second); !waiting(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never waited on the lock")
		}
	}
	ts.stop() // fails the test if serve has not returned within 30 s
	select {
	case <-answered:
	case <-time.After(30 * time.Second):
		t.Error("the request in flight was never answered")
	}
}
