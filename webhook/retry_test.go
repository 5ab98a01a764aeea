package webhook

import (
	"testing"
	"time"
)

func TestRetryDelaySchedule(t *testing.T) {
	want := []time.Duration{
		5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
	}
	for i, w := range want {
		got, ok := RetryDelay(i+1, nil)
		if !ok || got != w {
			t.Errorf("RetryDelay(%d) = %v, %v; want %v, true", i+1, got, ok, w)
		}
	}
	if MaxAttempts != 8 {
		t.Errorf("MaxAttempts = %d", MaxAttempts)
	}
	if d, ok := RetryDelay(MaxAttempts, nil); ok {
		t.Errorf("RetryDelay(%d) = %v, true; want no retry after the last attempt", MaxAttempts, d)
	}
	if d, ok := RetryDelay(0, nil); !ok || d != 5*time.Second {
		t.Errorf("RetryDelay(0) = %v, %v", d, ok)
	}
}

func TestRetryDelayJitter(t *testing.T) {
	var asked time.Duration
	full := func(max time.Duration) time.Duration { asked = max; return max }
	if d, _ := RetryDelay(2, full); d != 5*time.Minute+30*time.Second || asked != 30*time.Second {
		t.Errorf("full jitter: %v (asked for %v)", d, asked)
	}
	// A misbehaving jitter cannot push the delay outside [d, 1.1d].
	if d, _ := RetryDelay(1, func(time.Duration) time.Duration { return time.Hour }); d != 5500*time.Millisecond {
		t.Errorf("oversized jitter: %v", d)
	}
	if d, _ := RetryDelay(1, func(time.Duration) time.Duration { return -time.Hour }); d != 5*time.Second {
		t.Errorf("negative jitter: %v", d)
	}
	for range 1000 {
		d, _ := RetryDelay(7, RandomJitter)
		if d < 10*time.Hour || d > 11*time.Hour {
			t.Fatalf("RandomJitter delay %v out of range", d)
		}
	}
}
