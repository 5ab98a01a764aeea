package web

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"parcela"
)

// barrierOrders holds every FormOrder lookup until n of them have
// arrived (or a second passed), so two posts of one form on two instances
// both look for the form's order before either creates it: the race
// TestRacingPostsOfOneFormOnTwoInstancesMakeOneOrder sends at random.
type barrierOrders struct {
	parcela.FormOrderService
	mu      sync.Mutex
	arrived int
	n       int
	all     chan struct{}
}

func (o *barrierOrders) FormOrder(ctx context.Context, a parcela.Auth, key string) (*parcela.Order, error) {
	order, err := o.FormOrderService.FormOrder(ctx, a, key)
	o.mu.Lock()
	o.arrived++
	if o.arrived == o.n {
		close(o.all)
	}
	o.mu.Unlock()
	select {
	case <-o.all:
	case <-time.After(time.Second):
	}
	return order, err
}

// A double click whose two posts reach two instances makes one order, and
// takes one of the address's places of the hour: each instance counted it
// (an audit), and with a limit of 2 the buyer's next, real, second order
// was refused 429 for the rest of the hour. The post that finds the order
// the other made gives its place back.
func TestOrderLimitCountsARacingDoubleSubmitOnce(t *testing.T) {
	t.Parallel()
	shared := &memoryCounter{hits: map[string]int64{}}
	barrier := &barrierOrders{n: 2, all: make(chan struct{})}
	b := setup(t, func(d *Deps) {
		barrier.FormOrderService = d.Orders
		d.Orders = barrier
		d.OrdersPerHour, d.OrderCounter, d.TrustedProxies = 2, shared, netipPrefix(t, "127.0.0.0/8")
	})
	if res := doubleClick(t, b, b.instance(t)); res[0].status != http.StatusSeeOther || res[1].status != http.StatusSeeOther {
		t.Fatalf("double submit: %d, %d", res[0].status, res[1].status)
	}
	// The address has made one order this hour; its second is under the limit of 2.
	second := b.postFrom(t, b.offerPath(), "203.0.113.7", buyForm(t, b.get(t, b.offerPath()).body, testUpfront+":boleto", nil))
	if second.status != http.StatusSeeOther {
		t.Fatalf("the address's second order of the hour (limit 2, one made): status %d, Retry-After %q; want 303",
			second.status, second.header.Get("Retry-After"))
	}
}

// doubleClick posts one purchase form from one address to b's instance and
// other's at once, as a double click reaching two instances does, and
// checks that it made one order.
func doubleClick(t *testing.T, b, other *bundle) []response {
	t.Helper()
	form := buyForm(t, b.get(t, b.offerPath()).body, testUpfront+":boleto", nil)
	var wg sync.WaitGroup
	res := make([]response, 2)
	for i, at := range []*bundle{b, other} {
		wg.Go(func() { res[i] = at.postFrom(t, b.offerPath(), "203.0.113.7", form) })
	}
	wg.Wait()
	if n := len(b.store.orderList()); n != 1 {
		t.Fatalf("double submit made %d orders", n)
	}
	return res
}

// slowCreate delays the first CreateFormOrder (the post that took the
// place is still writing the order) after both posts looked the form's
// order up.
type slowCreate struct {
	barrierOrders
	once sync.Once
}

func (o *slowCreate) CreateFormOrder(ctx context.Context, a parcela.Auth, key string, req parcela.OrderRequest) (*parcela.Order, bool, error) {
	o.once.Do(func() { time.Sleep(300 * time.Millisecond) })
	return o.barrierOrders.FormOrderService.CreateFormOrder(ctx, a, key, req)
}

// A double click at the hour's last place, on two instances: one post
// takes the place and is still creating the order when the other, refused,
// looked the form's order up, found none yet, and answered 429; the payer's
// browser shows the last answer: "Foram feitos muitos pedidos", though the
// order was made (a review). The refused post now waits for its twin's.
func TestDoubleClickAtTheLastPlaceShowsTheOrder(t *testing.T) {
	t.Parallel()
	shared := &memoryCounter{hits: map[string]int64{}}
	slow := &slowCreate{barrierOrders: barrierOrders{n: 2, all: make(chan struct{})}}
	b := setup(t, func(d *Deps) {
		slow.FormOrderService = d.Orders
		d.Orders = slow
		d.OrdersPerHour, d.OrderCounter, d.TrustedProxies = 1, shared, netipPrefix(t, "127.0.0.0/8")
	})
	res := doubleClick(t, b, b.instance(t))
	if res[0].status != http.StatusSeeOther || res[1].status != http.StatusSeeOther {
		t.Fatalf("a double click at the last place made its order, but its posts were answered %d and %d", res[0].status, res[1].status)
	}
}
