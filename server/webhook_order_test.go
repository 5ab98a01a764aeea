package server_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"parcela"
)

// One entity's events can arrive out of order too: a bill's `pending`
// whose first attempt failed arrives after its `paid`, sent meanwhile.
// The guide said only events of different entities could, and a receiver
// trusting it applied `pending` last, over a paid bill. `created_at`
// orders them.
func TestOneEntitysEventsCanArriveOutOfOrder(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		rc := newReceiver(t, b)
		rc.behavior = func(path string, n int32, w http.ResponseWriter) bool {
			if n == 1 {
				w.WriteHeader(503)
				io.WriteString(w, `{"error":"maintenance"}`)
				return true
			}
			return false
		}
		rc.secret = b.hook(t, rc.srv.URL+"/flaky", "bill", "pending", "paid")["secret"].(string)
		b.startJobs(t, "127.0.0.0/8", 5*time.Second)
		offer, order := b.order()
		up, _ := configs(offer)
		bills := billIDs(b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, "pix", 1)).want(t, 200).JSON(t))
		eventually(t, 10*time.Second, "the first attempt failed", func() bool { return rc.calls["/flaky"].Load() == 1 })
		b.clock.Set(b.clock.Now().Add(time.Minute))
		b.pay(t, openPayment(t, b.bill(t, bills[0]))["id"].(string))
		eventually(t, 20*time.Second, "both events delivered", func() bool { return len(rc.receipts()) == 2 })

		got := rc.receipts()
		if got[0].event != "paid" || got[1].event != "pending" {
			t.Fatalf("arrived %s then %s; want paid, then pending retried", got[0].event, got[1].event)
		}
		evs, err := b.db.Events(context.Background(), parcela.Auth{CompanyID: b.company.ID, Environment: parcela.Sandbox}, bills[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 || evs[0].Event != "pending" || evs[1].Event != "paid" || !evs[0].CreatedAt.Before(evs[1].CreatedAt) {
			t.Fatalf("%d events: created_at does not order pending before paid", len(evs))
		}
	})
}
