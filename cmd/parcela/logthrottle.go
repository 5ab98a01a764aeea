package main

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// throttledHandler logs each warning or error message at most once per
// interval, the next one carrying how many were dropped ("suppressed"):
// the job queue repeats its errors at every poll while the database is
// down, many lines a second that bury the rest of the log.
type throttledHandler struct {
	slog.Handler
	t *throttle
}

type throttle struct {
	every time.Duration
	mu    sync.Mutex
	last  map[string]*repeats // by message
}

type repeats struct {
	at         time.Time
	suppressed int
}

func newThrottledHandler(h slog.Handler, every time.Duration) slog.Handler {
	return throttledHandler{h, &throttle{every: every, last: map[string]*repeats{}}}
}

func (h throttledHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.Handler.Handle(ctx, r)
	}
	h.t.mu.Lock()
	seen := h.t.last[r.Message]
	if seen != nil && r.Time.Sub(seen.at) < h.t.every {
		seen.suppressed++
		h.t.mu.Unlock()
		return nil
	}
	if len(h.t.last) >= 1000 {
		clear(h.t.last) // messages are the code's own, few; bound it anyway
	}
	h.t.last[r.Message] = &repeats{at: r.Time}
	h.t.mu.Unlock()
	if seen != nil && seen.suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", seen.suppressed))
	}
	return h.Handler.Handle(ctx, r)
}

func (h throttledHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return throttledHandler{h.Handler.WithAttrs(as), h.t}
}

func (h throttledHandler) WithGroup(name string) slog.Handler {
	return throttledHandler{h.Handler.WithGroup(name), h.t}
}
