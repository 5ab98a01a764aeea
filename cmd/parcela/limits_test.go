package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every listener of `parcela serve` closes a client that trickles its
// headers, at the configured timeout.
func TestServeListenersCloseTricklingClients(t *testing.T) {
	t.Parallel()
	ts := startServer(t, tempDSN(t), map[string]string{"PARCELA_READ_HEADER_TIMEOUT": "1s", "PARCELA_MAX_CONNECTIONS": "50"})
	for _, base := range []string{ts.prod, ts.sandbox, ts.ops} {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() {
			for _, b := range []byte("GET /healthz HTTP/1.1\r\nHost: parcela\r\nX-Slow: " + strings.Repeat("a", 100)) {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		if err := c.SetReadDeadline(time.Now().Add(3 * time.Second)); err != nil {
			t.Fatal(err)
		}
		// Closed is an end of stream, or a reset when the server closed
		// while the client was still writing; only the deadline means the
		// server kept the client.
		if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: a trickling client was not closed: %v", base, err)
		}
	}
}

func TestServeLimitsFromEnvironment(t *testing.T) {
	t.Parallel()
	l, err := readServeLimits(env(map[string]string{
		"PARCELA_READ_HEADER_TIMEOUT": "2s", "PARCELA_READ_TIMEOUT": "10s", "PARCELA_WRITE_TIMEOUT": "90s", "PARCELA_IDLE_TIMEOUT": "1m",
		"PARCELA_MAX_CONNECTIONS": "300", "PARCELA_UNAUTHENTICATED_RATE_LIMIT": "2", "PARCELA_IMAGE_RATE_LIMIT": "0",
		"PARCELA_PAGE_RATE_LIMIT": "0.5", "PARCELA_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.1/32", "PARCELA_IMAGE_CACHE_BYTES": "0",
		"PARCELA_PAGE_ORDERS_PER_HOUR": "0", "PARCELA_MAX_CONNECTIONS_PER_ADDRESS": "0",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if l.listener.ReadHeaderTimeout != 2*time.Second || l.listener.ReadTimeout != 10*time.Second || l.listener.WriteTimeout != 90*time.Second ||
		l.listener.IdleTimeout != time.Minute || l.listener.MaxConnections != 300 || l.unauthenticatedRate != 2 || l.imageRate != 0 || l.pageRate != 0.5 ||
		len(l.trustedProxies) != 2 || l.imageCacheBytes != -1 || l.pageOrdersPerHour != -1 || l.listener.MaxConnectionsPerAddress != 0 {
		t.Fatalf("%+v", l)
	}
	defaults, err := readServeLimits(env(nil))
	if err != nil || defaults.listener.WriteTimeout != time.Minute || defaults.unauthenticatedRate != 10 || defaults.imageRate != 20 || defaults.pageRate != 20 || defaults.imageCacheBytes <= 0 ||
		defaults.pageOrdersPerHour != 60 || defaults.listener.MaxConnectionsPerAddress != 256 {
		t.Fatalf("defaults %+v %v", defaults, err)
	}
	for name, value := range map[string]string{
		"PARCELA_READ_TIMEOUT": "soon", "PARCELA_IDLE_TIMEOUT": "-1s", "PARCELA_MAX_CONNECTIONS": "0",
		"PARCELA_UNAUTHENTICATED_RATE_LIMIT": "-3", "PARCELA_PAGE_RATE_LIMIT": "fast", "PARCELA_TRUSTED_PROXIES": "10.0.0.0/33", "PARCELA_IMAGE_CACHE_BYTES": "lots",
		"PARCELA_PAGE_ORDERS_PER_HOUR": "-1", "PARCELA_MAX_CONNECTIONS_PER_ADDRESS": "-1",
	} {
		if _, err := readServeLimits(env(map[string]string{name: value})); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, value, err)
		}
	}
}

// Every rate limit takes 0 and the rates its limiter can count, and stops
// the start, naming the variable, on a value it cannot: NaN made every
// request panic on a window of 0, Inf and 1e19 overflowed the count to a
// negative one that refused every request, and 1e-10 overflowed the window.
func TestServeRatesAtTheirLimits(t *testing.T) {
	t.Parallel()
	variableLimits(t, []string{"PARCELA_RATE_LIMIT", "PARCELA_SANDBOX_RATE_LIMIT", "PARCELA_UNAUTHENTICATED_RATE_LIMIT", "PARCELA_IMAGE_RATE_LIMIT",
		"PARCELA_PAGE_RATE_LIMIT"},
		[]string{"0", "0.00001", "0.5", "1000000000"},
		[]string{"NaN", "nan", "Inf", "+Inf", "-Inf", "1e19", "1e400", "1000000001", "1e-10", "0.000009", "-1", "ten"})
}

// A rate is kept as a whole number of requests a second, or, below one, as
// one request every whole number of seconds: a rate between them stops the
// start naming itself. 1.5 was kept as 1 a second, 0.3 as one every 4 s,
// a third less than set, and nothing said so.
func TestServeRatesAreKeptAsSet(t *testing.T) {
	t.Parallel()
	variableLimits(t, []string{"PARCELA_RATE_LIMIT", "PARCELA_SANDBOX_RATE_LIMIT", "PARCELA_UNAUTHENTICATED_RATE_LIMIT", "PARCELA_IMAGE_RATE_LIMIT",
		"PARCELA_PAGE_RATE_LIMIT"},
		[]string{"1", "2", "20", "1e3", "100.0", "0.5", "0.25", "0.2", "0.1", "0.001", "0.00001"},
		[]string{"1.5", "2.5", "20.9", "999999999.5", "0.3", "0.4", "0.75", "0.000015"})
}

// variableLimits checks that each of names takes every value of good, and
// stops the start naming itself on every value of bad.
func variableLimits(t *testing.T, names, good, bad []string) {
	t.Helper()
	for _, name := range names {
		for _, v := range good {
			if _, err := readServeConfig(env(map[string]string{name: v})); err != nil {
				t.Errorf("%s=%s: %v", name, v, err)
			}
		}
		for _, v := range bad {
			_, err := readServeConfig(env(map[string]string{name: v}))
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: %v", name, v, err)
			}
		}
	}
}

// The write and read timeouts take a second and more, and stop the start,
// naming themselves, under it: a write timeout of 1ns or 1ms started, and
// every request ran out of its time and was answered 503; a read header
// timeout of 1ns started, and every connection was closed unanswered
// before its headers were read; a read timeout of 1ns cut every form's
// body short.
func TestServeRequestTimeoutsOfASecondAtLeast(t *testing.T) {
	t.Parallel()
	variableLimits(t, []string{"PARCELA_WRITE_TIMEOUT", "PARCELA_READ_HEADER_TIMEOUT", "PARCELA_READ_TIMEOUT"},
		[]string{"1s", "1m", "24h"}, []string{"1ns", "1ms", "999ms", "0", "-1s", "soon"})
}

// The token cache's TTL and the shutdown's grace take 0 (no cache, no
// wait) and stop the start, naming the variable, on a negative duration,
// which acted as 0 while saying something else, on one past int64's
// nanoseconds, and past their ceilings: a revoked token was taken for as
// long as its lookup was kept (1000000h: for ever), and a stop could wait
// as long.
func TestServeDurationsAtTheirLimits(t *testing.T) {
	t.Parallel()
	bad := []string{"-1s", "-0.5ms", "1000000h", "2562047h", "2562048h", "9999999999999999999s", "20", "soon"}
	variableLimits(t, []string{"PARCELA_TOKEN_CACHE_TTL"}, []string{"0", "0s", "1ms", "2s", "5m"}, append(bad, "5m1ms", "1h"))
	variableLimits(t, []string{"PARCELA_SHUTDOWN_TIMEOUT"}, []string{"0", "0s", "1ms", "20s", "10m"}, append(bad, "10m1ms", "1h"))
}

// The log level is one of its four names, in any case: slog also reads
// "error+100" (every line silenced) and "info+3", which said nothing of
// what they did.
func TestServeLogLevels(t *testing.T) {
	t.Parallel()
	variableLimits(t, []string{"PARCELA_LOG_LEVEL"}, []string{"debug", "info", "warn", "error", "WARN", "Error"},
		[]string{"error+100", "info+3", "WARN-9", "warning", "trace", "-4", " info"})
}

// The public URLs are the prefixes of every offer, checkout and image link
// the API answers and stores: one without a scheme or host, or with a query,
// fragment or user, stops the start naming its variable, where it was taken
// and every link built on it was broken. So does one with a path: the
// pages' assets, forms and cities, and the docs' links, are the root's, and
// behind https://example.com/parcela they pointed outside it. So does a
// host no browser opens (https://ex..com, https://999.1.1.1).
func TestServePublicURLs(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"PARCELA_PUBLIC_URL", "PARCELA_SANDBOX_PUBLIC_URL"} {
		for v, want := range map[string]string{"https://api.example.com/": "https://api.example.com", "http://127.0.0.1:8080": "http://127.0.0.1:8080",
			"https://api.example.com//": "https://api.example.com", "http://parcela_web:8080": "http://parcela_web:8080",
			"https://pagamentos.ação.com.br": "https://pagamentos.ação.com.br", "http://[::1]:8080": "http://[::1]:8080", "https://xn--pay-8la.example.com": "https://xn--pay-8la.example.com"} {
			c, err := readServeConfig(env(map[string]string{name: v}))
			got := c.publicURL
			if name == "PARCELA_SANDBOX_PUBLIC_URL" {
				got = c.sandboxURL
			}
			if err != nil || got != want {
				t.Errorf("%s=%s: %q %v", name, v, got, err)
			}
		}
		for _, v := range []string{"api.example.com", "//api.example.com", "/pay", "ftp://api.example.com", "HTTPS://api.example.com", "https://",
			"https://:443", "https://api.example.com?a=b", "https://api.example.com/?", "https://api.example.com/#top", "https://user:secret@api.example.com",
			"https://api.example.com/a b", "https://api.example.com/%zz", " https://api.example.com", "https://example.com/parcela", "https://example.com/parcela/",
			"https://ex..com", "https://.example.com", "https://example.com.", "https://-pay.example.com", "https://pay-.example.com", "https://pay!.example.com",
			"https://999.1.1.1", "https://10.0.0", "https://[fe80::1%25eth0]", "https://" + strings.Repeat("a", 64) + ".com"} {
			_, err := readServeConfig(env(map[string]string{name: v}))
			if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "secret") {
				t.Errorf("%s=%s: %v", name, v, err)
			}
		}
	}
}

// A malformed PARCELA_WEBHOOK_ALLOWED_CIDRS stops the start before it
// touches the database, as every other variable does, where it was found
// after the migrations and the demo: `serve --demo` created the demo
// company, printed its token, and then stopped.
func TestServeRefusesBadCIDRsBeforeTheDatabase(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "parcela.db")
	out := &syncBuffer{}
	err := run(context.Background(), []string{"serve", "--demo"}, env(map[string]string{"PARCELA_DATABASE_URL": dsn, "PARCELA_ADDR": "127.0.0.1:0",
		"PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0", "PARCELA_WEBHOOK_ALLOWED_CIDRS": "10.0.0.0/8, 127.0.0.1/33"}), out, &syncBuffer{})
	if err == nil || !strings.Contains(err.Error(), "PARCELA_WEBHOOK_ALLOWED_CIDRS") || exitCode(err) != 2 {
		t.Fatalf("serve: %v", err)
	}
	if strings.Contains(out.String(), "sandbox_") {
		t.Errorf("the demo was set up before the refusal:\n%s", out)
	}
	if _, err := os.Stat(strings.TrimPrefix(dsn, "sqlite:")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database was created before the refusal: %v", err)
	}
}

// A listener address that cannot be listened on, malformed or in use,
// stops the start before the database is touched, where it was found after
// the migrations: a new binary started beside the running one migrated the
// database under it, then stopped.
func TestServeRefusesAnAddressBeforeTheDatabase(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for name, addr := range map[string]string{"PARCELA_ADDR": "8080", "PARCELA_SANDBOX_ADDR": taken.Addr().String(), "PARCELA_OPS_ADDR": "127.0.0.1:99999"} {
		path := filepath.Join(t.TempDir(), "parcela.db")
		vars := map[string]string{"PARCELA_DATABASE_URL": "sqlite:" + path, "PARCELA_ADDR": "127.0.0.1:0",
			"PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"}
		vars[name] = addr
		err := run(context.Background(), []string{"serve"}, env(vars), &syncBuffer{}, &syncBuffer{})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, addr, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s=%s: the database was created before the refusal: %v", name, addr, err)
		}
	}
}

// A listener serving beyond this machine without its public URL is logged
// at the start: every offer, checkout and payment link named the
// listener's own address (http://[::]:8080), which no customer can open,
// without a word. A loopback listener, a developer's, says nothing.
func TestServeWarnsOfLinksToTheListenersOwnAddress(t *testing.T) {
	t.Parallel()
	ts := startServer(t, tempDSN(t), map[string]string{"PARCELA_ADDR": "0.0.0.0:0"})
	ts.stop()
	log := ts.stderr.String()
	if !strings.Contains(log, "PARCELA_PUBLIC_URL is not set: the offer, checkout and payment links the API answers and stores name http://") {
		t.Errorf("no warning of production's links:\n%s", log)
	}
	if strings.Contains(log, "PARCELA_SANDBOX_PUBLIC_URL is not set") {
		t.Errorf("a warning of the loopback sandbox's links:\n%s", log)
	}
}

// A public URL's port is a TCP port: url.Parse takes any digits, and
// https://pay.example.com:99999 was every offer, checkout and image link.
func TestServePublicURLPortInRange(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"PARCELA_PUBLIC_URL", "PARCELA_SANDBOX_PUBLIC_URL"} {
		for _, v := range []string{"https://pay.example.com:99999", "https://pay.example.com:65536", "https://pay.example.com:0", "http://127.0.0.1:00"} {
			if _, err := readServeConfig(env(map[string]string{name: v})); err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "port") {
				t.Errorf("%s=%s: %v", name, v, err)
			}
		}
		for _, v := range []string{"https://pay.example.com:443", "http://127.0.0.1:65535", "http://[::1]:1"} {
			if _, err := readServeConfig(env(map[string]string{name: v})); err != nil {
				t.Errorf("%s=%s: %v", name, v, err)
			}
		}
	}
}

// Production and the sandbox are two listeners, so two addresses: one
// public URL for both sent one environment's every link to the other's
// listener, where its offers, checkouts and images are 404s.
func TestServePublicURLsAreTwoAddresses(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{{"https://pay.example.com", "https://pay.example.com/"}, {"https://pay.example.com", "HTTPS://Pay.Example.com"},
		// The scheme's default port, written or not, is one address.
		{"https://pay.example.com", "https://pay.example.com:443"}, {"http://127.0.0.1:80", "http://127.0.0.1"}} {
		_, err := readServeConfig(env(map[string]string{"PARCELA_PUBLIC_URL": pair[0], "PARCELA_SANDBOX_PUBLIC_URL": strings.ToLower(pair[1])}))
		if err == nil || !strings.Contains(err.Error(), "PARCELA_PUBLIC_URL and PARCELA_SANDBOX_PUBLIC_URL") {
			t.Errorf("%v: %v", pair, err)
		}
	}
	for _, sandbox := range []string{"https://sandbox.pay.example.com", "https://pay.example.com:8443"} {
		if _, err := readServeConfig(env(map[string]string{"PARCELA_PUBLIC_URL": "https://pay.example.com", "PARCELA_SANDBOX_PUBLIC_URL": sandbox})); err != nil {
			t.Error(err)
		}
	}
}

// `parcela serve` bounds each listener's connections per client address
// at PARCELA_MAX_CONNECTIONS_PER_ADDRESS: one address's second connection,
// beside one sending its body a byte at a time, is answered 429.
func TestServeBoundsConnectionsPerAddress(t *testing.T) {
	t.Parallel()
	ts := startServer(t, tempDSN(t), map[string]string{"PARCELA_MAX_CONNECTIONS_PER_ADDRESS": "1"})
	for _, base := range []string{ts.prod, ts.sandbox, ts.ops} {
		addr := strings.TrimPrefix(base, "http://")
		slow, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Close()
		if _, err := io.WriteString(slow, "POST /v1/orders HTTP/1.1\r\nHost: parcela\r\nContent-Length: 100\r\n\r\n{"); err != nil {
			t.Fatal(err)
		}
		res, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1" {
			t.Errorf("%s: a second connection of one address: %d, Retry-After %q", base, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
}

// An address's share follows the connections set: a quarter of them
// unless set itself, and never over them. A fixed 256 left an operator who
// set 200 connections with no bound at all.
func TestServeConnectionsPerAddressFollowMaxConnections(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		max, perAddress string
		want            int
	}{{"", "", 256}, {"200", "", 50}, {"3", "", 1}, {"200", "200", 200}, {"200", "0", 0}, {"", "10", 10}} {
		l, err := readServeLimits(env(map[string]string{"PARCELA_MAX_CONNECTIONS": c.max, "PARCELA_MAX_CONNECTIONS_PER_ADDRESS": c.perAddress}))
		if err != nil || l.listener.MaxConnectionsPerAddress != c.want {
			t.Errorf("max %q, per address %q: %d, %v; want %d", c.max, c.perAddress, l.listener.MaxConnectionsPerAddress, err, c.want)
		}
	}
	_, err := readServeLimits(env(map[string]string{"PARCELA_MAX_CONNECTIONS": "200", "PARCELA_MAX_CONNECTIONS_PER_ADDRESS": "256"}))
	if err == nil || !strings.Contains(err.Error(), "PARCELA_MAX_CONNECTIONS_PER_ADDRESS") {
		t.Fatalf("a share over the connections: %v", err)
	}
}

// A pool_max_conns below the 16 connections parcela keeps is said at the
// start: the pool had 16 without a word, beyond what the operator sized
// the database (or a pooler) for. Said, not refused, so an address that
// started before still starts; one without the parameter says nothing.
func TestServeSaysASmallPoolIsRaised(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	ts := startServer(t, dsn, nil)
	ts.stop()
	if log := ts.stderr.String(); strings.Contains(log, "pool_max_conns") {
		t.Errorf("a warning without pool_max_conns in the address:\n%s", log)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "8")
	u.RawQuery = q.Encode()
	ts = startServer(t, u.String(), nil)
	ts.stop()
	if log := ts.stderr.String(); !strings.Contains(log, "pool_max_conns=8 in the database address is below the 16 connections") {
		t.Errorf("no warning of the raised pool:\n%s", log)
	}
}
