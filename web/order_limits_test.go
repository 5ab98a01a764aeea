package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// postFrom is post as a trusted proxy forwarding client's request.
func (b *bundle) postFrom(t testing.TB, path, client string, form url.Values) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.server.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.server.URL)
	req.Header.Set("X-Forwarded-For", client)
	return b.roundTrip(t, req)
}

// One address creates at most OrdersPerHour orders from the offer pages
// in a clock hour, counted for every instance that shares the counter:
// the next is answered 429 with the form as typed and when it may be sent,
// and creates nothing. A form sent again for the order it created is no
// new order, another address has its own count, and the next hour starts
// over. Before, one address created an order, and a boleto the seller's
// bank bills for, with every post, 30 a minute.
func TestOrdersLimitedPerAddressPerHour(t *testing.T) {
	t.Parallel()
	shared := &memoryCounter{hits: map[string]int64{}}
	b := setup(t, func(d *Deps) {
		d.OrdersPerHour, d.OrderCounter, d.TrustedProxies = 2, shared, netipPrefix(t, "127.0.0.0/8")
	})
	other := b.instance(t)
	buy := func(at *bundle, client string) (response, url.Values) {
		form := buyForm(t, b.get(t, b.offerPath()).body, testUpfront+":boleto", nil)
		return at.postFrom(t, b.offerPath(), client, form), form
	}
	first, form := buy(b, "203.0.113.7")
	if second, _ := buy(other, "203.0.113.7"); first.status != http.StatusSeeOther || second.status != http.StatusSeeOther {
		t.Fatalf("orders under the limit: %d, %d", first.status, second.status)
	}
	third, _ := buy(b, "203.0.113.7")
	if third.status != http.StatusTooManyRequests || !strings.Contains(third.body, "um novo pedido poderá ser feito a partir de 05/03/2026 às 11:00") ||
		!strings.Contains(third.body, `value="Maria da Silva"`) || third.header.Get("Retry-After") != "3600" {
		t.Fatalf("third order of the hour: status %d, Retry-After %q\n%s", third.status, third.header.Get("Retry-After"), third.body)
	}
	if n := len(b.store.orderList()); n != 2 {
		t.Fatalf("%d orders", n)
	}
	if again := b.postFrom(t, b.offerPath(), "203.0.113.7", form); again.status != http.StatusSeeOther || again.header.Get("Location") != first.header.Get("Location") {
		t.Fatalf("the first form sent again: status %d, to %s", again.status, again.header.Get("Location"))
	}
	if res, _ := buy(other, "198.51.100.20"); res.status != http.StatusSeeOther {
		t.Fatalf("another address: status %d", res.status)
	}
	b.clock.Advance(time.Hour)
	if res, _ := buy(b, "203.0.113.7"); res.status != http.StatusSeeOther || len(b.store.orderList()) != 4 {
		t.Fatalf("the next hour: status %d, %d orders", res.status, len(b.store.orderList()))
	}
}

// Retry-After counts the seconds to the next hour up, as the posts' limit
// does: cut down, 59 min 59.5 s read 3599, and a client that waited them
// came half a second early, into the same refusal.
func TestOrdersLimitedRetryAfterIsNotEarly(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *Deps) { d.OrdersPerHour = 1 })
	b.clock.Advance(500 * time.Millisecond)
	if first := b.post(t, b.offerPath(), buyForm(t, b.get(t, b.offerPath()).body, testUpfront+":boleto", nil)); first.status != http.StatusSeeOther {
		t.Fatalf("first order: status %d", first.status)
	}
	second := b.post(t, b.offerPath(), buyForm(t, b.get(t, b.offerPath()).body, testUpfront+":boleto", url.Values{"name": {"Ana Souza"}}))
	if second.status != http.StatusTooManyRequests || second.header.Get("Retry-After") != "3600" {
		t.Fatalf("second order: status %d, Retry-After %q", second.status, second.header.Get("Retry-After"))
	}
}
