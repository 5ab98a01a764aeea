package main

import (
	"net"
	"strings"
	"testing"
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
