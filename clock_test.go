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
