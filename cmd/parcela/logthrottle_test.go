package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The job queue's warnings and errors repeat at each of its polls while
// the database is down (River's producers fetch every 200 ms per queue:
// 200 lines in 12 s of a PostgreSQL outage); each message is logged once
// per 10 s, the next with the count of the repeats in between. Info
// lines, and other messages, pass.
func TestJobLogRepeatsAreThrottled(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(newThrottledHandler(slog.NewJSONHandler(&out, nil), 10*time.Second)).With("component", "jobs")
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	logAt := func(level slog.Level, msg string, d time.Duration) {
		r := slog.NewRecord(at.Add(d), level, msg, 0)
		r.AddAttrs(slog.String("queue", "webhooks"))
		if err := log.Handler().Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		logAt(slog.LevelError, "producer: Error fetching jobs", time.Duration(i)*200*time.Millisecond)
		logAt(slog.LevelInfo, "job done", time.Duration(i)*200*time.Millisecond)
	}
	logAt(slog.LevelWarn, "another", time.Second)
	logAt(slog.LevelError, "producer: Error fetching jobs", 10*time.Second)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var fetch []string
	for _, l := range lines {
		if strings.Contains(l, "Error fetching jobs") {
			fetch = append(fetch, l)
		}
	}
	if len(fetch) != 2 || strings.Contains(fetch[0], "suppressed") || !strings.Contains(fetch[1], `"suppressed":49`) ||
		!strings.Contains(fetch[1], `"component":"jobs"`) {
		t.Errorf("the repeated error was logged:\n%s", strings.Join(fetch, "\n"))
	}
	if n := strings.Count(out.String(), "job done"); n != 50 {
		t.Errorf("%d of 50 info lines logged", n)
	}
	if !strings.Contains(out.String(), `"msg":"another"`) {
		t.Error("another message was held back")
	}
}

// An error the job queue logs with a context already canceled is what
// parcela stopping cut off (River's maintenance services log "Error
// starting transaction: context canceled" as they stop): it is logged at
// info, so that a clean stop writes no ERROR line for an operator's alert.
// The same error under a live context stays an error.
func TestJobErrorsOfAStopAreInfo(t *testing.T) {
	var out bytes.Buffer
	h := newThrottledHandler(slog.NewJSONHandler(&out, nil), 10*time.Second)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	slog.New(h).ErrorContext(stopped, "maintenance.PeriodicJobEnqueuer: Error starting transaction", "error", "context canceled")
	slog.New(h).ErrorContext(context.Background(), "producer: Error fetching jobs", "error", "connection refused")
	// A worker's panic while stopping is still an error.
	slog.New(h).ErrorContext(stopped, "jobExecutor: panic recovery; possible bug with Worker", "panic_val", "nil map")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"level":"INFO"`) || !strings.Contains(lines[0], `"stopping":true`) ||
		!strings.Contains(lines[1], `"level":"ERROR"`) || !strings.Contains(lines[2], `"level":"ERROR"`) {
		t.Fatalf("log:\n%s", out.String())
	}
	// Not written at all where info is not.
	out.Reset()
	quiet := newThrottledHandler(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelError}), 10*time.Second)
	slog.New(quiet).ErrorContext(stopped, "maintenance.PeriodicJobEnqueuer: Error starting transaction", "error", "context canceled")
	if out.Len() != 0 {
		t.Fatalf("written above its level: %s", out.String())
	}
}

// A sweep that fails on several bills in one run logs each bill's id, as
// the operator is told; only the same row's line again within 10 s is
// held back. By message alone, the first bill's line hid every other's.
func TestJobLogRowsAreNotRepeats(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	log := slog.New(newThrottledHandler(slog.NewJSONHandler(&out, nil), 10*time.Second)).With("component", "jobs")
	for _, id := range []string{"bill-a", "bill-b", "bill-c", "bill-a"} {
		log.Warn("sweep failed on a row; it is retried later", "sweep", "issue_installments", "id", id, "bill_id", id)
	}
	for _, id := range []string{"bill-a", "bill-b", "bill-c"} {
		if n := strings.Count(out.String(), `"id":"`+id+`"`); n != 1 {
			t.Errorf("%s logged %d times:\n%s", id, n, out.String())
		}
	}
}
