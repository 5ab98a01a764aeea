package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// throttledHandler logs each warning or error message at most once per
// interval, the next one carrying how many were dropped ("suppressed"):
// the job queue repeats its errors at every poll while the database is
// down, many lines a second that bury the rest of the log. A line about
// one row (a sweep's bill, a void's payment) is throttled per row: they
// are not repeats, and only the first row's id of each 10 s was logged. An error
// logged under a canceled context is logged at info ("stopping").
type throttledHandler struct {
	slog.Handler
	t *throttle
}

type throttle struct {
	every time.Duration
	mu    sync.Mutex
	last  map[string]*repeats // by message and row (throttleKey)
}

// rowAttrs are the attributes naming the row a line is about: each row
// retries on its own backoff, so its lines do not flood the log.
var rowAttrs = []string{"id", "bill_id", "payment_id", "delivery_id"}

// throttleKey is r's message with the ids of the row it is about.
func throttleKey(r slog.Record) string {
	key := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if slices.Contains(rowAttrs, a.Key) {
			key += "\x00" + a.Key + "=" + a.Value.String()
		}
		return true
	})
	return key
}

type repeats struct {
	at         time.Time
	suppressed int
}

func newThrottledHandler(h slog.Handler, every time.Duration) slog.Handler {
	return throttledHandler{h, &throttle{every: every, last: map[string]*repeats{}}}
}

func (h throttledHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && ctx.Err() != nil && canceledError(r) {
		// What parcela stopping cut off: the queue's services log it as
		// an error as they stop, and a clean stop should write none.
		r = r.Clone()
		r.Level = slog.LevelInfo
		r.AddAttrs(slog.Bool("stopping", true))
		if !h.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	if r.Level < slog.LevelWarn {
		return h.Handler.Handle(ctx, r)
	}
	key := throttleKey(r)
	h.t.mu.Lock()
	seen := h.t.last[key]
	if seen != nil && r.Time.Sub(seen.at) < h.t.every {
		seen.suppressed++
		h.t.mu.Unlock()
		return nil
	}
	if len(h.t.last) >= 1000 {
		clear(h.t.last) // a row's line is logged again at worst
	}
	h.t.last[key] = &repeats{at: r.Time}
	h.t.mu.Unlock()
	if seen != nil && seen.suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", seen.suppressed))
	}
	return h.Handler.Handle(ctx, r)
}

// canceledError tells whether r's error (River logs it as text) is a
// canceled context's: only that, not every error logged while stopping
// (a worker's panic among them), is what the stop cut off.
func canceledError(r slog.Record) bool {
	canceled := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" {
			canceled = strings.HasSuffix(a.Value.String(), context.Canceled.Error())
			return false
		}
		return true
	})
	return canceled
}

func (h throttledHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return throttledHandler{h.Handler.WithAttrs(as), h.t}
}

func (h throttledHandler) WithGroup(name string) slog.Handler {
	return throttledHandler{h.Handler.WithGroup(name), h.t}
}
