package web

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parcela"
)

func TestSubmissions(t *testing.T) {
	t.Parallel()
	s := newSubmissions(3, time.Hour)
	ctx := context.Background()
	var runs atomic.Int32
	ok := func() (string, error) { runs.Add(1); return "/there", nil }

	if got, repeated, err := s.do(ctx, "a", ok); got != "/there" || repeated || err != nil {
		t.Fatalf("first: %q %v %v", got, repeated, err)
	}
	if got, repeated, _ := s.do(ctx, "a", ok); got != "/there" || !repeated || runs.Load() != 1 {
		t.Fatalf("repeat: %q %v, %d runs", got, repeated, runs.Load())
	}
	// A failure is forgotten, so the corrected form goes through.
	fail := errors.New("no")
	if _, _, err := s.do(ctx, "b", func() (string, error) { return "", fail }); err != fail {
		t.Fatalf("failure: %v", err)
	}
	if got, repeated, _ := s.do(ctx, "b", ok); got != "/there" || repeated {
		t.Fatalf("after a failure: %q %v", got, repeated)
	}
	// Bounded: the oldest finished entries make room.
	for _, n := range []string{"c", "d", "e", "f"} {
		if _, _, err := s.do(ctx, n, ok); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.entries); n > 3 {
		t.Fatalf("%d entries kept, bound 3", n)
	}
	// A repeat waiting on a running submission gives up with its context.
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if _, _, err := s.do(ctx, "slow", func() (string, error) { close(started); <-release; return "/slow", nil }); err != nil {
			t.Error(err)
		}
	}()
	<-started
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, _, err := s.do(short, "slow", ok); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting repeat: %v", err)
	}
	close(release)
	<-done
}

func TestPostLimitsPerClient(t *testing.T) {
	t.Parallel()
	l := newPostLimits(2)
	a, b := netip.MustParseAddr("203.0.113.1"), netip.MustParseAddr("203.0.113.2")
	for range 2 {
		if _, ok := l.allow(a); !ok {
			t.Fatal("within the limit refused")
		}
	}
	if wait, ok := l.allow(a); ok || wait < time.Second {
		t.Fatalf("over the limit: %v %v", wait, ok)
	}
	if _, ok := l.allow(b); !ok {
		t.Fatal("another client shares the first one's bucket")
	}
}

// An IPv6 client is limited by its /64, the network a single subscriber
// is given: by the whole address, one host stepping through its network
// posted without limit, and, past maxPostBuckets addresses, every new
// payer of every company shared the overflow bucket it then drained.
func TestPostLimitsPerIPv6Network(t *testing.T) {
	t.Parallel()
	l := newPostLimits(2)
	refused := 0
	for i := range 10 {
		host := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 15: byte(i + 1)})
		if _, ok := l.allow(host); !ok {
			refused++
		}
	}
	if refused != 8 {
		t.Fatalf("10 posts from 10 addresses of one /64 at 2 a minute: %d refused", refused)
	}
	if n := len(l.buckets); n != 1 {
		t.Fatalf("one /64 took %d buckets", n)
	}
	if _, ok := l.allow(netip.MustParseAddr("2001:db8:1:3::1")); !ok {
		t.Fatal("another /64 shares the first one's bucket")
	}
	if _, ok := l.allow(netip.MustParseAddr("203.0.113.1")); !ok {
		t.Fatal("an IPv4 client shares an IPv6 network's bucket")
	}
}

func TestDoubleCardSubmitChargesOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testUpfront+":credit_card")
	page := b.get(t, checkout)
	u, _ := url.Parse(checkout)
	form := tokens(t, page.body, withCode(card("4000000000000002", "123", 1), u))
	first := b.post(t, u.Path+"/card", form)
	second := b.post(t, u.Path+"/card", form)
	if first.header.Get("Location") == "" || first.header.Get("Location") != second.header.Get("Location") {
		t.Fatalf("redirects %q and %q", first.header.Get("Location"), second.header.Get("Location"))
	}
	if n := len(b.onlyOrder(t).Billings[0].Bills[0].Payments); n != 1 {
		t.Fatalf("%d card attempts from one form", n)
	}
}

// The checkout's forms share one page's tokens, and a page restored by the
// Back button posts them again: a card sent after a Pix was issued from the
// same page is charged, not answered with that Pix.
func TestCheckoutFormsOfOnePageAreEachDone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkout := b.buy(t, testFinanced+":credit_card")
	page := b.get(t, checkout)
	u, _ := url.Parse(checkout)
	pix := b.post(t, u.Path+"/pix", tokens(t, page.body, withCode(url.Values{}, u)))
	if pix.status != http.StatusSeeOther {
		t.Fatalf("pix: %d", pix.status)
	}
	paid := b.post(t, u.Path+"/card", tokens(t, page.body, withCode(card("4111111111111111", "123", 1), u)))
	if paid.status != http.StatusSeeOther || paid.header.Get("Location") == pix.header.Get("Location") {
		t.Fatalf("card: %d to %q, the Pix's page", paid.status, paid.header.Get("Location"))
	}
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	if bill.Status != "paid" || len(bill.Payments) != 2 || bill.Payments[1].Method != "credit_card" {
		t.Fatalf("bill %s with %d payments: the card was not charged", bill.Status, len(bill.Payments))
	}
}

func TestPostBodyBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page := b.get(t, b.offerPath())
	form := tokens(t, page.body, customer())
	form.Set("street", strings.Repeat("x", maxFormBytes))
	res := b.post(t, b.offerPath(), form)
	if res.status != http.StatusRequestEntityTooLarge || len(b.store.orderList()) != 0 {
		t.Fatalf("status %d", res.status)
	}
}

func TestTheme(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.store.mu.Lock()
	c := b.store.companies["company-1"]
	c.Dark, c.Palette, c.Logo = true, "purple", "https://cdn.example.com/logo.png"
	banner := "http://insecure.example.com/banner.png"
	b.offer.Product.BannerURL = &banner
	b.store.mu.Unlock()
	res := b.get(t, b.offerPath())
	if !strings.Contains(res.body, `<body class="palette-purple theme-dark"`) || !strings.Contains(res.body, `src="https://cdn.example.com/logo.png"`) {
		t.Fatal("theme or logo missing")
	}
	if strings.Contains(res.body, "insecure.example.com") {
		t.Fatal("an http image is linked (the policy would block it anyway)")
	}
	b.store.mu.Lock()
	c.Palette = `x" onload="alert(1)`
	b.store.mu.Unlock()
	if res := b.get(t, b.offerPath()); !strings.Contains(res.body, `<body class="palette-default theme-dark"`) {
		t.Fatal("an unknown palette is not the default")
	}
}

// A remembered submission's key is a copy of the nonce, not the piece of
// the form's body the nonce was parsed as: the body holds the card number
// or the CPF, and an entry lives an hour.
func TestSubmissionsKeepNothingOfTheForm(t *testing.T) {
	t.Parallel()
	body := "card_number=4111111111111111&card_cvv=123&nonce=0MTkNanhGLqW2VPJ6I1mug"
	nonce := body[strings.Index(body, "nonce=")+len("nonce="):]
	s := newSubmissions(3, time.Hour)
	if _, _, err := s.do(context.Background(), nonce, func() (string, error) { return "/done", nil }); err != nil {
		t.Fatal(err)
	}
	if len(s.entries) != 1 {
		t.Fatalf("%d entries", len(s.entries))
	}
	for k := range s.entries {
		if k != nonce || within(k, body) {
			t.Fatalf("the entry's key %q is a piece of the form's body", k)
		}
	}
}

// A form whose body or query is not form encoding (a bad escape) is the
// client's error: 400, with nothing logged as a failure of the pages.
func TestMalformedFormIsABadRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.buy(t, testUpfront+":pix")
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	u, _ := url.Parse(parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode))
	for _, path := range []string{b.offerPath(), u.Path + "/card", u.Path + "/pix", u.Path + "/boleto", u.Path + "/card?%zz"} {
		body := "code=%zz"
		if strings.Contains(path, "?") {
			body = "code=" + url.QueryEscape(u.Query().Get("code"))
		}
		req, err := http.NewRequest(http.MethodPost, b.server.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.server.URL)
		res, err := b.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s with a bad escape: %d, want 400", path, res.StatusCode)
		}
	}
	if logs := b.logs.String(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("a client's malformed form logged as a failure:\n%s", logs)
	}
}

// The pages' GETs (the offer page, the order page, the checkout, the
// payment's page, a plan's preview) are limited per client address, as the
// posts are: 300
// GETs of an offer page from one address were 300 database reads and
// renders. The window is the test's: no request crosses a second.
func TestPageReadsLimitedPerAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *Deps) {
		d.PageRateLimit = 6
		d.TrustedProxies = netipPrefix(t, "127.0.0.0/8")
	})
	start := time.Date(2026, time.March, 5, 13, 0, 0, 0, time.UTC)
	at := start
	b.pages.reads.now = func() time.Time { return at }
	landing := b.buy(t, testUpfront+":pix") // one GET, of the offer page
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	checkout := parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode)
	var statuses []int
	for _, path := range []string{landing, checkout, parcela.Links{}.PaymentURL(bill.Payments[0].ID),
		b.offerPath() + "/plan?option=" + testFinanced + "&installments=3", b.offerPath(), b.offerPath()} {
		statuses = append(statuses, b.get(t, path).status)
	}
	if want := []int{200, 200, 200, 200, 200, 429}; !slices.Equal(statuses, want) {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
	refused := b.get(t, checkout)
	if refused.status != http.StatusTooManyRequests || refused.header.Get("Retry-After") != "1" ||
		!strings.Contains(refused.body, "Aguarde 1 segundo e recarregue a página") {
		t.Fatalf("refused: %d %v\n%s", refused.status, refused.header, refused.body)
	}
	// The assets and the cities, served from memory, are not counted.
	for _, path := range []string{"/pay/assets/app.js", "/pay/cities/SP"} {
		if res := b.get(t, path); res.status != http.StatusOK {
			t.Fatalf("%s: %d", path, res.status)
		}
	}
	// Another address has its own allowance, an IPv6 one by its /64.
	for _, client := range []string{"203.0.113.9", "2001:db8:1:2::1"} {
		if res := b.getFrom(t, b.offerPath(), client); res.status != http.StatusOK {
			t.Fatalf("%s: %d", client, res.status)
		}
	}
	// The next window takes requests again.
	at = start.Add(time.Second)
	if res := b.get(t, b.offerPath()); res.status != http.StatusOK {
		t.Fatalf("next second: %d", res.status)
	}
}

// A limit below one a second counts windows of its inverse, as the API's do.
func TestPageLimitsBelowOneASecond(t *testing.T) {
	t.Parallel()
	l := newPageLimits(0.1)
	at := time.Date(2026, time.March, 5, 13, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return at }
	addr := netip.MustParseAddr("203.0.113.9")
	if _, ok := l.allow(addr); !ok {
		t.Fatal("first refused")
	}
	if wait, ok := l.allow(addr); ok || wait != 10*time.Second {
		t.Fatalf("second: %v %v", wait, ok)
	}
	at = at.Add(10 * time.Second)
	if _, ok := l.allow(addr); !ok {
		t.Fatal("next window refused")
	}
	if newPageLimits(0) != nil {
		t.Fatal("0 is no limit")
	}
}

// One post from each of maxPostBuckets networks (a /44 of IPv6 holds a
// million /64s) filled the table for ten minutes, and every new payer of
// every company then shared the overflow bucket, which a few more posts
// drained: a bucket full again is a new one's, so it makes room.
func TestPostLimitsTableFilledByOnePostEach(t *testing.T) {
	t.Parallel()
	l := newPostLimits(2)
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	network := func(i int) netip.Addr {
		return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, byte(i >> 16), byte(i >> 8), byte(i), 0xff, 15: 1})
	}
	for i := range maxPostBuckets + 20 { // the table, then the overflow's burst
		l.allow(network(i))
	}
	// Past the 30 s a post takes to come back, the attacker drains the
	// overflow again from new networks, and a payer posts.
	now = now.Add(31 * time.Second)
	for i := range 20 {
		l.allow(network(maxPostBuckets + 100 + i))
	}
	if _, ok := l.allow(netip.MustParseAddr("198.51.100.7")); !ok {
		t.Fatal("a payer's first post refused: the table is full of buckets as good as new")
	}
}
