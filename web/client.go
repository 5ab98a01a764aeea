package web

import (
	"net/http"
	"net/netip"
	"parcela/forwarded"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// clientAddr is the address the request came from, behind the trusted
// proxies.
func (h *Handler) clientAddr(r *http.Request) netip.Addr {
	return forwarded.ClientAddr(r, h.d.TrustedProxies)
}

// postLimits keeps a token bucket per client (an IPv4 address, an IPv6 /64)
// for the pages' POSTs.
// Buckets idle for ten minutes are dropped, and the map is bounded: when it
// is full, new addresses share one overflow bucket rather than grow it.
type postLimits struct {
	perMinute int
	mu        sync.Mutex
	buckets   map[netip.Addr]*postBucket
	overflow  *rate.Limiter
	swept     time.Time
}

type postBucket struct {
	limiter *rate.Limiter
	seen    time.Time
}

const maxPostBuckets = 100_000

func newPostLimits(perMinute int) *postLimits {
	return &postLimits{perMinute: perMinute, buckets: map[netip.Addr]*postBucket{}, overflow: newPostLimiter(perMinute * 10)}
}

func newPostLimiter(perMinute int) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(float64(perMinute)/60), max(1, perMinute))
}

// allow takes a token for the client at addr (its forwarded.Network), or
// tells how long to wait for one.
func (l *postLimits) allow(addr netip.Addr) (time.Duration, bool) {
	addr = forwarded.Network(addr)
	now := time.Now()
	l.mu.Lock()
	if now.Sub(l.swept) > time.Minute {
		for a, b := range l.buckets {
			if now.Sub(b.seen) > 10*time.Minute {
				delete(l.buckets, a)
			}
		}
		l.swept = now
	}
	lim := l.overflow
	if b, ok := l.buckets[addr]; ok {
		b.seen, lim = now, b.limiter
	} else if len(l.buckets) < maxPostBuckets {
		b = &postBucket{limiter: newPostLimiter(l.perMinute), seen: now}
		l.buckets[addr], lim = b, b.limiter
	}
	l.mu.Unlock()
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return max(d, time.Second), false
	}
	return 0, true
}
