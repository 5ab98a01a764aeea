package main

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// On SIGTERM every listener stops taking requests at once, while the ones
// in flight drain: where the listeners were shut one after another, the
// sandbox and operations listeners kept serving new requests for as long
// as a production request was in flight.
func TestShutdownClosesEveryListenerAtOnce(t *testing.T) {
	t.Parallel()
	ts := startServer(t, tempDSN(t), map[string]string{"PARCELA_READ_HEADER_TIMEOUT": "3s"})
	// A production request in flight: its headers are not all sent.
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.prod, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: parcela\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the server has read it
	stopped := make(chan struct{})
	go func() { ts.stop(); close(stopped) }()
	time.Sleep(300 * time.Millisecond) // the signal is taken
	client := &http.Client{Timeout: time.Second}
	for _, base := range []string{ts.sandbox, ts.ops} {
		if resp, err := client.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			t.Errorf("%s answered %d after the signal, while a production request drained", base, resp.StatusCode)
		}
	}
	select {
	case <-stopped:
		t.Fatal("serve stopped before its request in flight ended")
	default:
	}
	<-stopped
}
