package server

import (
	"net/http"
	"net/netip"
	"parcela/forwarded"
	"strings"
)

// clientAddress is what the per-address limits count a request by: the
// network of the address it comes from, behind the trusted proxies
// (forwarded.ClientAddr, forwarded.Network: an IPv6 client's /64), or the
// raw peer when it is unreadable.
func clientAddress(r *http.Request, trusted []netip.Prefix) string {
	if a := forwarded.ClientAddr(r, trusted); a.IsValid() {
		return forwarded.Network(a).String()
	}
	return r.RemoteAddr
}

// ParseTrustedProxies reads a comma-separated list of CIDR ranges.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
