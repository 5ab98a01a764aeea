package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// clientAddr is the address the request came from: the connection's peer,
// or, when the peer is a trusted proxy, the last address in X-Forwarded-For
// that is not one of the trusted proxies. A forwarded header from anyone
// else is ignored, so a client cannot choose its own address.
func (h *Handler) clientAddr(r *http.Request) netip.Addr {
	peer := parseAddr(r.RemoteAddr)
	if !h.trusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a := parseAddr(strings.TrimSpace(hops[i]))
		if !a.IsValid() {
			break
		}
		if !h.trusted(a) {
			return a
		}
		peer = a
	}
	return peer
}

func (h *Handler) trusted(a netip.Addr) bool {
	for _, p := range h.d.TrustedProxies {
		if a.IsValid() && p.Contains(a) {
			return true
		}
	}
	return false
}

// parseAddr reads "ip", "ip:port" or "[ip]:port", dropping any IPv6 zone
// and unmapping IPv4-in-IPv6.
func parseAddr(s string) netip.Addr {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.WithZone("").Unmap()
}

// postLimits keeps a token bucket per client address for the pages' POSTs.
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

// allow takes a token for addr, or tells how long to wait for one.
func (l *postLimits) allow(addr netip.Addr) (time.Duration, bool) {
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
