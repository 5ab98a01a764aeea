package webhook

import (
	"math/rand/v2"
	"time"
)

// schedule is the wait after each failed attempt: retries come quickly at
// first (a blip, a deploy) and then back off to cover about a day and a half
// of receiver downtime.
var schedule = [...]time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// MaxAttempts is the number of delivery attempts, the first included.
const MaxAttempts = len(schedule) + 1

// RetryDelay returns how long to wait after failed attempt number attempt
// (1 for the first attempt) before the next one, and false when no attempts
// remain and the delivery should be marked failed. Each delay gets up to 10%
// added by jitter, so deliveries that failed together (a receiver outage) do
// not all return at the same instant; nil jitter adds nothing. An attempt
// below 1 is treated as the first, so a caller bug still retries.
func RetryDelay(attempt int, jitter func(max time.Duration) time.Duration) (time.Duration, bool) {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > len(schedule) {
		return 0, false
	}
	d := schedule[attempt-1]
	if jitter != nil {
		// Clamp, so a faulty jitter cannot shrink or blow up the schedule.
		d += min(max(jitter(d/10), 0), d/10)
	}
	return d, true
}

// RandomJitter is the production jitter: uniform in [0, limit].
func RandomJitter(limit time.Duration) time.Duration {
	if limit <= 0 {
		return 0
	}
	return rand.N(limit + 1)
}
