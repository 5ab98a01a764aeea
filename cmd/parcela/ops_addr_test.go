package main

import (
	"net"
	"strings"
	"testing"

	"parcela/server"
)

// An operations listener bound beyond the loopback is warned of at the
// start: its profiles answer without a token. Judged on the address bound,
// without binding one (tests listen on the loopback only).
func TestOpsListenerBeyondTheLoopbackIsWarnedOf(t *testing.T) {
	t.Parallel()
	for addr, warned := range map[string]bool{
		"127.0.0.1:9090": false, "127.0.0.2:9090": false, "[::1]:9090": false,
		"0.0.0.0:9090": true, "[::]:9090": true, "10.0.0.5:9090": true, "203.0.113.7:9090": true,
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if w := opsExposed(a); (w != "") != warned || warned && !strings.Contains(w, "PARCELA_OPS_ADDR") {
			t.Errorf("%s: warning %q, want one: %v", addr, w, warned)
		}
	}
}

// Trusting every address as a proxy is warned of at the start: each client
// then writes the address the per-address limits count.
func TestTrustingEveryAddressIsWarnedOf(t *testing.T) {
	t.Parallel()
	for list, warned := range map[string]bool{
		"": false, "10.0.0.0/8, 192.168.1.7/32": false, "173.245.48.0/20,2400:cb00::/32": false,
		"0.0.0.0/0": true, "10.0.0.0/8,::/0": true,
	} {
		ps, err := server.ParseTrustedProxies(list)
		if err != nil {
			t.Fatal(err)
		}
		if w := trustsEveryAddress(ps); (w != "") != warned {
			t.Errorf("%q: warning %q, want one: %v", list, w, warned)
		}
	}
}
