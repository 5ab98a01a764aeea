package webhook

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// These tests only classify addresses; nothing here opens a connection.

var refused = []string{
	"127.0.0.1", "127.255.255.254", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
	"169.254.169.254", "169.254.1.1", "100.64.0.1", "100.127.255.255",
	"0.0.0.0", "0.1.2.3", "255.255.255.255", "224.0.0.1", "239.255.255.250", "240.0.0.1",
	"192.0.0.1", "192.0.2.1", "198.51.100.1", "203.0.113.1", "198.18.0.1", "198.19.255.255", "192.88.99.1",
	"::", "::1", "fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "ff02::1", "fec0::1",
	"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
	"168.63.129.16", "::ffff:168.63.129.16", "64:ff9b::a83f:8110",
	"::127.0.0.1", // deprecated IPv4-compatible form
	"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1",
	"2002:a00:1::1", "2001::1", "2001:db8::1", "3fff::1", "100::1",
}

var accepted = []string{
	"8.8.8.8", "1.1.1.1", "168.63.129.15", "168.63.129.17", "172.32.0.1", "100.128.0.1", "192.169.0.1", "11.0.0.1",
	"2606:4700:4700::1111", "2a00:1450:4001::1", "::ffff:8.8.8.8",
	"64:ff9b::808:808", "2002:808:808::1",
}

func TestCheckRefusesSpecialPurposeAddresses(t *testing.T) {
	p, err := NewAddressPolicy("")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range refused {
		ip := netip.MustParseAddr(s)
		err := p.Check(ip)
		var blocked *BlockedAddressError
		if !errors.As(err, &blocked) {
			t.Errorf("Check(%s) = %v, want *BlockedAddressError", s, err)
			continue
		}
		if blocked.Addr != ip || !strings.Contains(err.Error(), ip.String()) {
			t.Errorf("Check(%s): error %q does not name the address", s, err)
		}
	}
	for _, s := range accepted {
		if err := p.Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", s, err)
		}
	}
}

func TestBlockedAddressMessage(t *testing.T) {
	var p *AddressPolicy // nil refuses like the zero value
	tests := map[string]string{
		"10.0.0.1":        "address 10.0.0.1 is private and not allowed for webhook delivery",
		"127.0.0.1":       "address 127.0.0.1 is loopback and not allowed for webhook delivery",
		"169.254.169.254": "address 169.254.169.254 is the cloud metadata endpoint (link-local) and not allowed for webhook delivery",
		"64:ff9b::a00:1":  "address 64:ff9b::a00:1 is NAT64 of 10.0.0.1 (private) and not allowed for webhook delivery",
	}
	for s, want := range tests {
		if err := p.Check(netip.MustParseAddr(s)); err == nil || err.Error() != want {
			t.Errorf("Check(%s) = %v, want %q", s, err, want)
		}
	}
	if err := p.Check(netip.Addr{}); err == nil {
		t.Error("Check(invalid) = nil")
	}
}

func TestAllowedCIDRs(t *testing.T) {
	p, err := NewAddressPolicy(" 127.0.0.0/8 , ::1/128,")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"} {
		if err := p.Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("Check(%s) with 127.0.0.0/8 allowed = %v", s, err)
		}
	}
	for _, s := range []string{"10.1.2.3", "192.168.1.1", "169.254.169.254", "64:ff9b::7f00:1"} {
		if err := p.Check(netip.MustParseAddr(s)); err == nil {
			t.Errorf("Check(%s) with 127.0.0.0/8 allowed = nil, want refusal", s)
		}
	}
}

func TestNewAddressPolicyRejectsBadCIDR(t *testing.T) {
	for _, bad := range []string{"bogus", "10.0.0.0/33", "127.0.0.1", "127.0.0.0/8,nope/1"} {
		_, err := NewAddressPolicy(bad)
		if err == nil {
			t.Errorf("NewAddressPolicy(%q) = nil error", bad)
			continue
		}
		if !strings.Contains(err.Error(), strings.Split(bad, ",")[len(strings.Split(bad, ","))-1]) {
			t.Errorf("NewAddressPolicy(%q) error %q does not name the CIDR", bad, err)
		}
	}
}

func TestControl(t *testing.T) {
	p, _ := NewAddressPolicy("")
	for _, addr := range []string{"127.0.0.1:80", "10.1.2.3:443", "[::1]:8080", "[fe80::1%eth0]:80", "[::ffff:127.0.0.1]:80", "169.254.169.254:80"} {
		var blocked *BlockedAddressError
		if err := p.Control("tcp", addr, nil); !errors.As(err, &blocked) {
			t.Errorf("Control(%s) = %v, want *BlockedAddressError", addr, err)
		}
	}
	for _, addr := range []string{"8.8.8.8:443", "[2606:4700:4700::1111]:443"} {
		if err := p.Control("tcp", addr, nil); err != nil {
			t.Errorf("Control(%s) = %v", addr, err)
		}
	}
	// Fail closed on anything that is not ip:port.
	for _, addr := range []string{"", "localhost:80", "127.0.0.1"} {
		if err := p.Control("tcp", addr, nil); err == nil {
			t.Errorf("Control(%q) = nil, want error", addr)
		}
	}
	local, _ := NewAddressPolicy("127.0.0.0/8")
	if err := local.Control("tcp4", "127.0.0.1:8080", nil); err != nil {
		t.Errorf("Control with 127.0.0.0/8 allowed = %v", err)
	}
}

// The process's own listeners are refused whatever the allowed ranges
// open: with loopback allowed, a webhook at the operations listener read
// its goroutine dump into the delivery log (an audit).
func TestAddressPolicyRefusesTheOwnListeners(t *testing.T) {
	p, err := NewAddressPolicy("127.0.0.0/8,10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	p.RefuseOwn([]netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:9090"), netip.MustParseAddrPort("[::]:8080")},
		[]netip.Addr{netip.MustParseAddr("10.1.2.3")})
	for addr, refused := range map[string]bool{
		"127.0.0.1:9090": true, "127.0.0.2:9090": true, "[::ffff:127.0.0.1]:9090": true,
		"127.0.0.1:8080": true, "[::1]:8080": true, "10.1.2.3:8080": true,
		"127.0.0.1:9091": false, "10.1.2.4:8080": false, "10.1.2.3:9090": false,
	} {
		err := p.Control("tcp", addr, nil)
		var blocked *BlockedAddressError
		if got := errors.As(err, &blocked) && strings.Contains(blocked.Reason, "own"); got != refused {
			t.Errorf("%s: %v, want refused %v", addr, err, refused)
		}
	}
}
