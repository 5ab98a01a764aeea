package webhook

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// BlockedAddressError says the address policy refused to connect to Addr.
// The sender reports it as OutcomeBlocked so the delivery log says why.
type BlockedAddressError struct {
	Addr   netip.Addr
	Reason string // e.g. "private", "loopback"
}

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("address %s is %s and not allowed for webhook delivery", e.Addr, e.Reason)
}

// AddressPolicy decides which IP addresses webhooks may be delivered to.
// Webhook URLs are chosen by customers, so without it anyone could make
// parcela call its own internal services or the cloud metadata endpoint.
// The zero value (and nil) refuse every special-purpose address.
type AddressPolicy struct {
	allowed []netip.Prefix
	// own are the process's own listeners, refused whatever allowed says
	// (RefuseOwn).
	own []netip.AddrPort
}

// RefuseOwn makes p refuse the process's own listeners, whatever the
// allowed ranges: with loopback allowed (the README's setting for local
// development), a webhook pointed at the operations listener was delivered,
// and its log showed the goroutine dump of /debug/pprof, which can show
// tokens and payers' data, to the company that made it (an audit). A
// listener on an unspecified address (0.0.0.0, ::) is refused on every
// address with its port that the machine may answer on: loopback, and the
// addresses of its interfaces (local, read at start).
func (p *AddressPolicy) RefuseOwn(listeners []netip.AddrPort, local []netip.Addr) {
	for _, l := range listeners {
		a := l.Addr().Unmap()
		if !a.IsUnspecified() {
			p.own = append(p.own, netip.AddrPortFrom(a, l.Port()))
			continue
		}
		for _, lo := range append([]netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback(), a}, local...) {
			p.own = append(p.own, netip.AddrPortFrom(lo.Unmap(), l.Port()))
		}
	}
}

// InterfaceAddrs are the addresses of the machine's interfaces, which a
// listener on an unspecified address answers on (RefuseOwn's local).
func InterfaceAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// ownListener tells whether ap is one of the process's own listeners.
func (p *AddressPolicy) ownListener(ap netip.AddrPort) bool {
	if p == nil {
		return false
	}
	a := ap.Addr().WithZone("").Unmap()
	for _, o := range p.own {
		if o.Port() == ap.Port() && (o.Addr() == a || o.Addr().IsLoopback() && a.IsLoopback()) {
			return true
		}
	}
	return false
}

// NewAddressPolicy returns a policy that additionally allows the
// comma-separated CIDRs in allowedCIDRs (e.g. "127.0.0.0/8,::1/128" for local
// development and tests). An empty string allows nothing extra.
func NewAddressPolicy(allowedCIDRs string) (*AddressPolicy, error) {
	p := &AddressPolicy{}
	for _, field := range strings.Split(allowedCIDRs, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(field)
		if err != nil {
			return nil, fmt.Errorf("webhook: allowed CIDR %q is invalid: %v", field, err)
		}
		p.allowed = append(p.allowed, prefix.Masked())
	}
	return p, nil
}

// Check returns a *BlockedAddressError unless ip may receive webhooks.
func (p *AddressPolicy) Check(ip netip.Addr) error {
	if !ip.IsValid() {
		return &BlockedAddressError{Addr: ip, Reason: "not a valid IP address"}
	}
	// Prefix.Contains never matches an address with a zone, so "fe80::1%eth0"
	// would slip past every rule below if the zone stayed on.
	bare := ip.WithZone("")
	// Unmapping makes ::ffff:10.0.0.1 face the IPv4 rules, which is where the
	// kernel will actually send it.
	unmapped := bare.Unmap()
	// No receiver lives at 0.0.0.0 or ::: on Linux a connection there
	// reaches this host, so an allowance as wide as 0.0.0.0/0 led a webhook
	// to the process's own listeners past RefuseOwn (an audit).
	if unmapped.IsUnspecified() {
		return &BlockedAddressError{Addr: ip, Reason: "unspecified"}
	}
	if p.allows(bare) || p.allows(unmapped) {
		return nil
	}
	if reason := forbidden(unmapped); reason != "" {
		return &BlockedAddressError{Addr: ip, Reason: reason}
	}
	return nil
}

func (p *AddressPolicy) allows(ip netip.Addr) bool {
	if p == nil {
		return false
	}
	for _, prefix := range p.allowed {
		if prefix.Contains(ip) {
			return true
		}
	}
	return false
}

// Control is a net.Dialer Control hook. It runs for every connection after
// DNS resolution, on the very address about to be dialled, so a hostname
// that resolves (or rebinds) to an internal address is still refused.
func (p *AddressPolicy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		// Fail closed: an address we cannot read is an address we cannot vouch for.
		return fmt.Errorf("webhook: cannot check dial address %q: %w", address, err)
	}
	return p.CheckDial(ap)
}

// CheckDial is Check for a connection to ap: one of the process's own
// listeners (RefuseOwn) is refused too.
func (p *AddressPolicy) CheckDial(ap netip.AddrPort) error {
	if p.ownListener(ap) {
		return &BlockedAddressError{Addr: ap.Addr(), Reason: "one of parcela's own listeners"}
	}
	return p.Check(ap.Addr())
}

// rule is a special-purpose range and why webhooks may not go there.
type rule struct {
	prefix netip.Prefix
	reason string
}

func rules(pairs ...string) []rule {
	rs := make([]rule, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		rs = append(rs, rule{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return rs
}

// IPv4 special-purpose ranges (IANA registry, RFC 6890 and successors). The
// first match names the reason, so narrower ranges come before wider ones.
var v4Rules = rules(
	"0.0.0.0/32", "unspecified",
	"0.0.0.0/8", "in \"this network\" (0.0.0.0/8)",
	"10.0.0.0/8", "private",
	"100.64.0.0/10", "carrier-grade NAT shared space",
	"127.0.0.0/8", "loopback",
	"169.254.169.254/32", "the cloud metadata endpoint (link-local)",
	// Azure's platform endpoint (WireServer, the host agent), which every
	// Azure VM reaches at a public address (an audit).
	"168.63.129.16/32", "the cloud platform endpoint (Azure)",
	"169.254.0.0/16", "link-local",
	"172.16.0.0/12", "private",
	"192.0.0.0/24", "reserved for IETF protocol assignments",
	"192.0.2.0/24", "reserved for documentation",
	"192.88.99.0/24", "deprecated 6to4 relay anycast",
	"192.168.0.0/16", "private",
	"198.18.0.0/15", "reserved for benchmarking",
	"198.51.100.0/24", "reserved for documentation",
	"203.0.113.0/24", "reserved for documentation",
	"224.0.0.0/4", "multicast",
	"255.255.255.255/32", "broadcast",
	"240.0.0.0/4", "reserved",
)

// IPv6 special-purpose ranges. Everything outside global unicast (2000::/3)
// is refused afterwards, except the NAT64 prefix, whose embedded IPv4
// address decides (DNS64 networks reach public IPv4 hosts through it).
var v6Rules = rules(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"fe80::/10", "link-local",
	"fc00::/7", "unique-local (private)",
	"ff00::/8", "multicast",
	"64:ff9b:1::/48", "local-use NAT64",
	"2001::/32", "Teredo",
	"2001::/23", "reserved for IETF protocol assignments",
	"2001:db8::/32", "reserved for documentation",
	"3fff::/20", "reserved for documentation",
)

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	global6   = netip.MustParsePrefix("2000::/3")
)

// forbidden returns why ip (already unmapped and zone-free) may not receive
// webhooks, or "" if it may.
func forbidden(ip netip.Addr) string {
	if ip.Is4() {
		return match(v4Rules, ip)
	}
	if reason := match(v6Rules, ip); reason != "" {
		return reason
	}
	// Translation prefixes carry an IPv4 address that the network will
	// reach on our behalf; judge that address.
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return embedded("NAT64", netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(ip):
		return embedded("6to4", netip.AddrFrom4([4]byte(b[2:6])))
	case !global6.Contains(ip):
		return "not a global unicast address"
	}
	return ""
}

func embedded(kind string, v4 netip.Addr) string {
	if reason := match(v4Rules, v4); reason != "" {
		return fmt.Sprintf("%s of %s (%s)", kind, v4, reason)
	}
	return ""
}

func match(rs []rule, ip netip.Addr) string {
	for _, r := range rs {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	return ""
}
