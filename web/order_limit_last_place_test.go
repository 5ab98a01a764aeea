package web

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"parcela"
)

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
