package web

import (
	"math"
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
// A bucket whose tokens have all come back is a new one's, so it is dropped:
// every minute, and, while the map is full, every second. The map is
// bounded: when it is full, new addresses share one overflow bucket rather
// than grow it. Buckets were dropped after ten idle minutes, so one post
// from each of maxPostBuckets networks (a /44 of IPv6 holds a million
// /64s) filled the map for ten minutes, and every new payer of every
// company shared the overflow bucket, which a few more posts drained.
type postLimits struct {
	perMinute int
	now       func() time.Time
	mu        sync.Mutex
	buckets   map[netip.Addr]*postBucket
	overflow  *rate.Limiter
	swept     time.Time
}

type postBucket struct {
	limiter *rate.Limiter
}

const maxPostBuckets = 100_000

func newPostLimits(perMinute int) *postLimits {
	return &postLimits{perMinute: perMinute, now: time.Now, buckets: map[netip.Addr]*postBucket{}, overflow: newPostLimiter(perMinute * 10)}
}

func newPostLimiter(perMinute int) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(float64(perMinute)/60), max(1, perMinute))
}

// allow takes a token for the client at addr (its forwarded.Network), or
// tells how long to wait for one.
func (l *postLimits) allow(addr netip.Addr) (time.Duration, bool) {
	addr = forwarded.Network(addr)
	now := l.now()
	l.mu.Lock()
	if since := now.Sub(l.swept); since > time.Minute || (since > time.Second && len(l.buckets) >= maxPostBuckets) {
		for a, b := range l.buckets {
			if b.limiter.TokensAt(now) >= float64(b.limiter.Burst()) {
				delete(l.buckets, a)
			}
		}
		l.swept = now
	}
	lim := l.overflow
	if b, ok := l.buckets[addr]; ok {
		lim = b.limiter
	} else if len(l.buckets) < maxPostBuckets {
		b = &postBucket{limiter: newPostLimiter(l.perMinute)}
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

// pageLimits counts the pages' GETs per client (an IPv4 address, an IPv6
// /64) in fixed windows, as the API's per-address limits do: a second, or
// the inverse of a rate below one a second. A refused request takes
// nothing, so a client that keeps asking still gets its rate. Each
// instance counts its own (a shared count would cost a database write for
// every few page reads it protects). The table is cleared every window and
// bounded: past maxPostBuckets addresses in one window, new ones share one
// overflow count of ten times the rate.
type pageLimits struct {
	max    int64 // requests per window
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	start int64 // current window, in ms since the epoch
	hits  map[netip.Addr]int64
}

// newPageLimits returns a limit of perSecond GETs per client, or nil (no
// limit) when perSecond is not positive.
func newPageLimits(perSecond float64) *pageLimits {
	if perSecond <= 0 {
		return nil
	}
	l := &pageLimits{window: time.Second, now: time.Now, hits: map[netip.Addr]int64{}}
	if perSecond >= 1 {
		l.max = int64(perSecond)
	} else {
		l.max, l.window = 1, time.Duration(math.Ceil(1/perSecond))*time.Second
	}
	return l
}

// allow counts a GET of the client at addr, or tells how long until its
// next window.
func (l *pageLimits) allow(addr netip.Addr) (time.Duration, bool) {
	if l == nil {
		return 0, true
	}
	addr = forwarded.Network(addr)
	now := l.now().UnixMilli()
	start := now - now%l.window.Milliseconds()
	l.mu.Lock()
	defer l.mu.Unlock()
	if start > l.start {
		l.start = start
		clear(l.hits)
	}
	limit := l.max
	if _, ok := l.hits[addr]; !ok && len(l.hits) >= maxPostBuckets {
		addr, limit = netip.Addr{}, l.max*10
	}
	if l.hits[addr] >= limit {
		return time.Duration(start+l.window.Milliseconds()-now) * time.Millisecond, false
	}
	l.hits[addr]++
	return 0, true
}
