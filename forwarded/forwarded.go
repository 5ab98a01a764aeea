// Package forwarded finds the address a request came from when it may have
// passed through reverse proxies the operator trusts. The API and the
// payer's pages limit and record requests by it.
package forwarded

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr is the address r came from: its TCP peer, or, when the peer
// is one of the trusted proxies, the nearest address in X-Forwarded-For
// that is not; a hop that cannot be read stops the walk at the last proxy
// read. Nothing else in the header is believed, so a client cannot choose
// its own address. The address is invalid when the peer's is unreadable.
// Limits count by its Network.
func ClientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := Parse(r.RemoteAddr)
	if !Trusted(peer, trusted) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a := Parse(strings.TrimSpace(hops[i]))
		if !a.IsValid() {
			break
		}
		if !Trusted(a, trusted) {
			return a
		}
		peer = a
	}
	return peer
}

// Network is what a client at a is limited by: an IPv4 address itself, an
// IPv6 address's /64. A subscriber is given a whole /64 (a host picks its
// own addresses in it), so limited by its address one client could take
// 2^64 allowances, and fill the bounded tables the limits are kept in.
func Network(a netip.Addr) netip.Addr {
	// Unmapped first: ::ffff:192.0.2.1 is an IPv4 client, whose /64 would
	// be every IPv4 client's.
	if a = a.Unmap(); !a.Is6() {
		return a
	}
	p, err := a.Prefix(64)
	if err != nil {
		return a
	}
	return p.Addr()
}

// Trusted reports whether a is in one of the trusted ranges.
func Trusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if a.IsValid() && p.Contains(a) {
			return true
		}
	}
	return false
}

// Parse reads "ip", "ip:port" or "[ip]:port", dropping any IPv6 zone and
// unmapping IPv4-in-IPv6; anything else is the invalid address.
func Parse(s string) netip.Addr {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.WithZone("").Unmap()
}
