package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parcela"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// countingTokens is tokensFake that counts its lookups.
type countingTokens struct {
	tokensFake
	lookups atomic.Int32
}

func (c *countingTokens) Authenticate(ctx context.Context, plain string) (*parcela.Token, error) {
	c.lookups.Add(1)
	return c.tokensFake.Authenticate(ctx, plain)
}

// noOrders finds no order, safely from many requests at once.
type noOrders struct{ parcela.OrderService }

func (noOrders) Order(context.Context, parcela.Auth, string) (*parcela.Order, error) {
	return nil, parcela.NotFound("order")
}

// limitedServer serves svc (the fake token and orders by default) with cfg.
func limitedServer(t *testing.T, svc server.Services, cfg server.Config) *httptest.Server {
	t.Helper()
	if svc.Tokens == nil {
		svc.Tokens = tokensFake{}
	}
	if svc.Orders == nil {
		svc.Orders = noOrders{}
	}
	cfg.Environment = parcela.Sandbox
	srv := httptest.NewServer(server.New(svc, cfg))
	t.Cleanup(srv.Close)
	return srv
}

// get sends GET path with an Authorization header (none when empty) and
// an X-Forwarded-For (none when empty).
func get(t *testing.T, client *http.Client, url, authorization, forwardedFor string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, body
}

// flood sends GET url from conns connections back to back for d and counts
// the answers that were not 429, and how many whole seconds (all, and
// those entirely within the flood) the flood touched: a limit of n a
// second lets between n × full and n × all through.
func flood(t *testing.T, urls []string, conns int, d time.Duration) (passed int, all, full int64) {
	t.Helper()
	begin := time.Now()
	defer func() {
		end := time.Now()
		all, full = end.Unix()-begin.Unix()+1, end.Unix()-begin.Unix()-1
	}()
	var count atomic.Int32
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for i := range conns {
		url := urls[i%len(urls)]
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			for time.Now().Before(stop) {
				req, _ := http.NewRequest("GET", url, nil)
				req.Header.Set("Authorization", "Bearer sandbox_fake")
				res, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusTooManyRequests {
					count.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(count.Load()), 0, 0
}

// startOfNextSecond waits for a second to begin.
func startOfNextSecond() {
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
}

// A concurrent flood gets the whole rate through: about rate × seconds
// requests, not the handful the old token bucket let through (it reserved
// a token for every refused request and could not give them back).
func TestRateLimitFloodGetsTheWholeRate(t *testing.T) {
	t.Parallel()
	srv := limitedServer(t, server.Services{}, server.Config{RateLimit: 10})
	startOfNextSecond()
	passed, all, full := flood(t, []string{srv.URL + "/external_api/v1/orders/o1"}, 4, 2900*time.Millisecond)
	if int64(passed) < 10*full || int64(passed) > 10*all {
		t.Fatalf("%d requests passed in %d windows of 10, %d of them whole", passed, all, full)
	}
}

// Two instances on one database share each token's limit: 10 a second is
// 10 across both, not 10 each.
func TestRateLimitSharedAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db := sqldbtest.Open(t, e, sqldb.Config{})
			// Each run its own token id, as PostgreSQL tests share a database.
			tokens := &namedTokens{id: "token-" + sqldbtest.Suffix()}
			counter := &checkedCounter{t: t, RateCounter: db}
			a := limitedServer(t, server.Services{Tokens: tokens, RateCounter: counter}, server.Config{RateLimit: 10})
			b := limitedServer(t, server.Services{Tokens: tokens, RateCounter: counter}, server.Config{RateLimit: 10})
			startOfNextSecond()
			passed, all, full := flood(t, []string{a.URL + "/external_api/v1/orders/o1", b.URL + "/external_api/v1/orders/o1"}, 4, 2900*time.Millisecond)
			if int64(passed) < 10*full || int64(passed) > 10*all {
				t.Fatalf("%d requests passed through two instances in %d windows of 10, %d of them whole", passed, all, full)
			}
		})
	}
}

// checkedCounter fails the test when the shared counter fails (the
// limiter would fall back to counting per instance).
type checkedCounter struct {
	server.RateCounter
	t *testing.T
}

func (c *checkedCounter) AddHits(ctx context.Context, bucket string, start, end time.Time, hits int64) (int64, error) {
	n, err := c.RateCounter.AddHits(ctx, bucket, start, end, hits)
	if err != nil {
		c.t.Errorf("count hit: %v", err)
	}
	return n, err
}

// namedTokens knows sandbox_fake as the token id.
type namedTokens struct{ id string }

func (n *namedTokens) Authenticate(_ context.Context, plain string) (*parcela.Token, error) {
	if plain != "sandbox_fake" {
		return nil, parcela.Errorf(parcela.EUNAUTHORIZED, "invalid access token")
	}
	return &parcela.Token{ID: n.id, CompanyID: "company", Environment: parcela.Sandbox}, nil
}

// Requests without a valid token are limited per client address, and once
// an address has used its allowance its tokens are not even looked up;
// another address is not affected.
func TestUnauthenticatedRequestsLimitedPerAddress(t *testing.T) {
	t.Parallel()
	tokens := &countingTokens{}
	loopback := netip.MustParsePrefix("127.0.0.0/8")
	srv := limitedServer(t, server.Services{Tokens: tokens}, server.Config{UnauthenticatedRateLimit: 3, TrustedProxies: []netip.Prefix{loopback}})
	url := srv.URL + "/external_api/v1/orders/o1"
	startOfNextSecond()
	var statuses []int
	for i := range 8 {
		auth := "Bearer sandbox_wrong_" + strconv.Itoa(i)
		if i == 1 {
			auth = "" // a missing token counts too
		}
		status, h, body := get(t, http.DefaultClient, url, auth, "203.0.113.7")
		statuses = append(statuses, status)
		if status == http.StatusTooManyRequests {
			var p server.Problem
			if err := json.Unmarshal(body, &p); err != nil || p.Code != parcela.ERATELIMITED || h.Get("Retry-After") != "1" {
				t.Fatalf("429 %v %s", h, body)
			}
		}
	}
	want := []int{401, 401, 401, 429, 429, 429, 429, 429}
	for i := range want {
		if statuses[i] != want[i] {
			t.Fatalf("statuses %v, want %v", statuses, want)
		}
	}
	// Two wrong tokens were looked up within the limit, a third used it
	// up; after that, none.
	if n := tokens.lookups.Load(); n != 3 {
		t.Fatalf("%d token lookups", n)
	}
	if status, _, body := get(t, http.DefaultClient, url, "Bearer sandbox_fake", "198.51.100.9"); status != http.StatusNotFound {
		t.Fatalf("another address with a good token: %d %s", status, body)
	}
	// A client cannot choose its address: X-Forwarded-For from an
	// untrusted peer is ignored.
	direct := limitedServer(t, server.Services{}, server.Config{UnauthenticatedRateLimit: 1})
	startOfNextSecond()
	get(t, http.DefaultClient, direct.URL+"/external_api/v1/orders/o1", "", "198.51.100.1")
	if status, _, _ := get(t, http.DefaultClient, direct.URL+"/external_api/v1/orders/o1", "", "198.51.100.2"); status != http.StatusTooManyRequests {
		t.Fatalf("a forged X-Forwarded-For escaped the limit: %d", status)
	}
}

// An IPv6 client is limited by its /64, the network a single subscriber
// is given: by the whole address, one host stepping through its network
// had every token it tried looked up, ten a second from each of 2^64
// addresses.
func TestUnauthenticatedRequestsLimitedPerIPv6Network(t *testing.T) {
	t.Parallel()
	tokens := &countingTokens{}
	loopback := netip.MustParsePrefix("127.0.0.0/8")
	srv := limitedServer(t, server.Services{Tokens: tokens}, server.Config{UnauthenticatedRateLimit: 3, TrustedProxies: []netip.Prefix{loopback}})
	url := srv.URL + "/external_api/v1/orders/o1"
	startOfNextSecond()
	var statuses []int
	for i := range 6 {
		status, _, _ := get(t, http.DefaultClient, url, "Bearer sandbox_wrong_"+strconv.Itoa(i), "2001:db8:1:2::"+strconv.Itoa(i+1))
		statuses = append(statuses, status)
	}
	if !slices.Equal(statuses, []int{401, 401, 401, 429, 429, 429}) {
		t.Fatalf("six addresses of one /64 at 3 a second: %v", statuses)
	}
	// Three within the limit, a fourth used it up; after that, none.
	if n := tokens.lookups.Load(); n != 4 {
		t.Fatalf("%d token lookups", n)
	}
	if status, _, body := get(t, http.DefaultClient, url, "Bearer sandbox_fake", "2001:db8:1:3::1"); status != http.StatusNotFound {
		t.Fatalf("another /64 with a good token: %d %s", status, body)
	}
}

// The Bearer scheme is case-insensitive (RFC 9110); other schemes are not
// bearer tokens.
func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	srv := limitedServer(t, server.Services{}, server.Config{})
	url := srv.URL + "/external_api/v1/orders/o1"
	for auth, want := range map[string]int{
		"Bearer sandbox_fake": 404, "bearer sandbox_fake": 404, "BEARER sandbox_fake": 404, "BeArEr  sandbox_fake ": 404,
		"Basic sandbox_fake": 401, "Bearer": 401, "Bearersandbox_fake": 401, "Bearer sandbox_nope": 401,
	} {
		if status, _, body := get(t, http.DefaultClient, url, auth, ""); status != want {
			t.Errorf("%q: %d, want %d: %s", auth, status, want, body)
		}
	}
}
