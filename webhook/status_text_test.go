package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// rawAnswer is a receiver that writes its answer's head byte for byte, as
// net/http's server would not: a reason phrase in Latin-1, a NUL.
func rawAnswer(t *testing.T, head string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString(head + "Content-Length: 0\r\nConnection: close\r\n\r\n")
		_ = buf.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The receiver's status line and Location header are its own text, and an
// attempt's error quotes them into the delivery log: a Latin-1 reason
// phrase (a Brazilian server's "503 Serviço Indisponível") or a NUL made
// text PostgreSQL refuses, and the attempt could not be recorded.
func TestSendErrorIsStorableText(t *testing.T) {
	long := strings.Repeat("x", 32<<10)
	for _, c := range []struct {
		name, head, want string
	}{
		{"latin-1 reason", "HTTP/1.1 503 Servi\xe7o Indispon\xedvel\r\n", "receiver answered 503 Servi\uFFFDo Indispon\uFFFDvel"},
		{"nul in the reason", "HTTP/1.1 500 Bad\x00Thing\r\n", "receiver answered 500 Bad\uFFFDThing"},
		{"long reason", "HTTP/1.1 502 " + long + "\r\n", "receiver answered 502 " + strings.Repeat("x", maxStatusText-4)},
		{"latin-1 location", "HTTP/1.1 302 Found\r\nLocation: /p\xe1gina\r\n", "receiver answered 302 Found redirecting to \"/p\uFFFDgina\""},
		{"long location", "HTTP/1.1 301 Moved\r\nLocation: /" + long + "\r\n", `receiver answered 301 Moved redirecting to "/` + strings.Repeat("x", maxLocationText-3) + `"; redirects are not followed`},
		// Quoting makes a no-break space six bytes: the quoted Location is
		// what is cut, never inside an escape, and the advice stays.
		{"location quoting makes long", "HTTP/1.1 301 Moved\r\nLocation: /" + strings.Repeat("\u00a0", 1<<10) + "\r\n",
			`receiver answered 301 Moved redirecting to "/` + strings.Repeat(`\u00a0`, (maxLocationText-3)/6) + `"; redirects are not followed, configure the final URL`},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := rawAnswer(t, c.head)
			res := localSender(t, 0).Send(context.Background(), request(srv.URL, newSecret(t)))
			if res.Outcome != OutcomeRetry {
				t.Fatalf("outcome %s (%s), want retry", res.Outcome, res.Error)
			}
			if !utf8.ValidString(res.Error) || strings.ContainsRune(res.Error, 0) || len(res.Error) > maxErrorText {
				t.Fatalf("error %q (%d bytes) is not text the log can store", res.Error, len(res.Error))
			}
			if !strings.HasPrefix(res.Error, c.want) {
				t.Errorf("error %q, want it to begin %q", res.Error, c.want)
			}
		})
	}
}

func TestPrintableTextCutsOnACharacter(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"ação", 2, "a"},
		{"ação", 4, "aç"},
		{"ação", 5, "açã"},
		{"a\x00\xffb", 100, "a\uFFFD\uFFFDb"},
		{"", 10, ""},
	} {
		if got := printableText(c.in, c.max); got != c.want {
			t.Errorf("printableText(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// A 101 Switching Protocols answer hands the sender the connection as its
// body, which neither the client's timeout nor the context bounds: reading
// it hung the attempt, and its worker, for as long as the receiver held the
// connection open. It is a failure like any answer that is not a 2xx, ended
// at once.
func TestSendSwitchingProtocolsIsAFailure(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		_ = buf.Flush()
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handler returns before the server closes
	done := make(chan Result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		done <- localSender(t, 300*time.Millisecond).Send(ctx, request(srv.URL, newSecret(t)))
	}()
	select {
	case res := <-done:
		if res.Outcome != OutcomeRetry || res.StatusCode != http.StatusSwitchingProtocols || res.Error != "receiver answered 101 Switching Protocols" {
			t.Fatalf("%+v", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the attempt still waits on the receiver's connection past its time limit")
	}
}
