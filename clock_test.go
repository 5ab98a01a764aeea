package parcela

import (
	"testing"
	"time"
)

// The system clock tells instants to the millisecond, as they are stored:
// read in the last millisecond of a due day, it is the due instant itself
// (not late), never a fraction past it.
func TestSystemClockToTheMillisecond(t *testing.T) {
	t.Parallel()
	for range 100 {
		before := time.Now()
		now := SystemClock{}.Now()
		if now.Nanosecond()%int(time.Millisecond) != 0 {
			t.Fatalf("SystemClock.Now() = %s, with digits past the millisecond", now.Format(time.RFC3339Nano))
		}
		if now.Before(before.Truncate(time.Millisecond)) || now.Sub(before) > time.Second {
			t.Fatalf("SystemClock.Now() = %v, read after %v", now, before)
		}
	}
}

// The system clock never answers an instant before one it answered, though
// the host's clock steps back (an NTP correction, a virtual machine
// restored): it holds still until the host's clock passes it again. A card
// approved while the host's clock stepped back was recorded paid at its
// attempt's instant, after the "now" of its recording, refused as paid in
// the future and its approval voided.
func TestSystemClockNeverGoesBack(t *testing.T) {
	first := SystemClock{}.Now()
	defer func(w func() time.Time) { hostClock = w }(hostClock)
	hostClock = func() time.Time { return first.Add(-time.Hour) }
	if got := (SystemClock{}).Now(); got.Before(first) {
		t.Fatalf("the host's clock stepped back an hour: SystemClock.Now() = %v, after it answered %v", got, first)
	}
	hostClock = func() time.Time { return first.Add(1500 * time.Microsecond) }
	if got := (SystemClock{}).Now(); !got.Equal(first.Add(time.Millisecond)) {
		t.Fatalf("once the host's clock passed it: SystemClock.Now() = %v, want %v", got, first.Add(time.Millisecond))
	}
}
