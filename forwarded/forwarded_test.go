package forwarded

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	proxies := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}
	for _, tt := range []struct {
		name    string
		peer    string
		trusted []netip.Prefix
		xff     string
		want    string
	}{
		{"no proxy trusted: the peer", "127.0.0.1:5555", nil, "203.0.113.9", "127.0.0.1"},
		{"trusted proxy: the forwarded client", "127.0.0.1:5555", proxies, "203.0.113.9", "203.0.113.9"},
		{"spoofed hop before the real one", "127.0.0.1:5555", proxies, "198.51.100.1, 203.0.113.9", "203.0.113.9"},
		{"through two proxies", "127.0.0.1:5555", proxies, "203.0.113.9, 10.1.2.3", "203.0.113.9"},
		{"garbage behind a second proxy: that proxy", "127.0.0.1:5555", proxies, "not-an-ip, 10.1.2.3", "10.1.2.3"},
		{"no header: the proxy", "127.0.0.1:5555", proxies, "", "127.0.0.1"},
		{"IPv4 in IPv6, with a zone", "[::ffff:203.0.113.9%eth0]:443", nil, "", "203.0.113.9"},
		{"an unreadable peer", "pipe", proxies, "203.0.113.9", "invalid IP"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := http.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.peer
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
			if got := ClientAddr(r, tt.trusted).String(); got != tt.want {
				t.Fatalf("client %s, want %s", got, tt.want)
			}
		})
	}
}

// A client is limited by its IPv4 address, or its IPv6 address's /64; an
// IPv4 address mapped into IPv6 is an IPv4 client, not one of the ::/64
// every mapped address shares.
func TestNetwork(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"203.0.113.9":              "203.0.113.9",
		"::ffff:203.0.113.9":       "203.0.113.9",
		"2001:db8:1:2:aaaa::1":     "2001:db8:1:2::",
		"2001:db8:1:2:ffff:ffff::": "2001:db8:1:2::",
		"::1":                      "::",
	} {
		if got := Network(netip.MustParseAddr(in)).String(); got != want {
			t.Errorf("Network(%s) = %s, want %s", in, got, want)
		}
	}
}
