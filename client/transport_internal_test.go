package client

import (
	"math"
	"testing"
	"time"
)

// The wait before a retry without Retry-After doubles from the first, but
// never past the longest wait, however many attempts a caller allows.
func TestBackoffIsBoundedByTheLongestWait(t *testing.T) {
	t.Parallel()
	for _, tr := range []*transport{{backoff: 200 * time.Millisecond, maxWait: 30 * time.Second}, {backoff: 200 * time.Millisecond, maxWait: math.MaxInt64}} {
		for attempt := 1; attempt <= 100; attempt++ {
			var d time.Duration
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("attempt %d: panic %v", attempt, r)
					}
				}()
				d = tr.delay(attempt)
			}()
			if d < 0 || d > tr.maxWait {
				t.Fatalf("attempt %d: wait %v, want within [0, %v]", attempt, d, tr.maxWait)
			}
		}
	}
}

// A Retry-After too large for a time.Duration is a very long wait (and so
// more than the longest the client waits), not a negative one.
func TestRetryAfterOutOfRange(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"9223372037", "99999999999999999999", "100000000000"} {
		if d, ok := retryAfter(v, now); !ok || d < 24*time.Hour {
			t.Errorf("Retry-After %s: wait %v, %v", v, d, ok)
		}
	}
}

func TestRetryAfterAsADate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"Thu, 26 Nov 2026 12:00:07 GMT": 7 * time.Second,
		"Thu, 26 Nov 2026 11:59:00 GMT": 0,
		"7":                             7 * time.Second,
	} {
		if d, ok := retryAfter(v, now); !ok || d != want {
			t.Errorf("Retry-After %q: %v, %v, want %v", v, d, ok, want)
		}
	}
}
