package server_test

import (
	"strings"
	"sync"
	"testing"
)

// A bank's notice is applied once: delivered again (the same notice_id),
// it changes nothing and answers the bill as it stands, where a partial
// settlement sent twice was counted twice. The same notice_id naming
// another settlement is refused, and a new notice of a payment already
// paid is not taken for a replay: its money reaches no open payment.
func TestSettlementNoticeAppliedOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		charged := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
		bills := billIDs(charged)
		pay := openPayment(t, b.bill(t, bills[0]))
		pid, amount := pay["id"].(string), int64(pay["amount_cents"].(float64))
		path := "/external_api/v1/sandbox/payments/" + pid + "/pay"
		received := func(bill map[string]any) int64 {
			t.Helper()
			for _, p := range bill["payments"].([]any) {
				if p := p.(map[string]any); p["id"] == pid {
					return int64(p["paid_amount_cents"].(float64))
				}
			}
			t.Fatalf("payment %s not in its bill", pid)
			return 0
		}
		part := map[string]any{"notice_id": "E0000000020261121153000000000001", "paid_amount_cents": 1000}
		// Delivered twice at once: one applies it, the other finds it applied.
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i := range statuses {
			wg.Go(func() { statuses[i] = b.call("POST", path, part).Status })
		}
		wg.Wait()
		if statuses[0] != 200 || statuses[1] != 200 {
			t.Fatalf("a notice delivered twice at once: %v", statuses)
		}
		if got := received(b.call("POST", path, part).want(t, 200).JSON(t)); got != 1000 {
			t.Fatalf("a partial notice delivered twice: the payment received %d cents, want 1000", got)
		}
		// The notice's id with another amount, or of another payment, is no replay.
		other := map[string]any{"notice_id": part["notice_id"], "paid_amount_cents": 2000}
		if got := fieldCodes(t, b.call("POST", path, other).want(t, 422)); got["notice_id"] != "invalid" {
			t.Fatalf("a notice id reused with another amount: %v", got)
		}
		// The rest, by a notice of its own, pays the bill.
		rest := map[string]any{"notice_id": "E0000000020261121153000000000002"}
		if got := b.call("POST", path, rest).want(t, 200).JSON(t); got["status"] != "paid" || received(got) != amount {
			t.Fatalf("the rest of the payment: bill %v, received %d of %d", got["status"], received(got), amount)
		}
		b.call("POST", path, rest).want(t, 200)
		if got := received(b.bill(t, bills[0])); got != amount {
			t.Fatalf("the last notice again: received %d, want %d", got, amount)
		}
		// A third notice pays a payment already paid: refused, not confused
		// with a replay. Without an id, a retry is harmless as before.
		if r := b.call("POST", path, map[string]any{"notice_id": "E0000000020261121153000000000003"}).want(t, 409); r.JSON(t)["code"] != "invalid_state" {
			t.Fatalf("a new notice of a paid payment: %s", r.Body)
		}
		b.call("POST", path, nil).want(t, 200)
		// The id's length is the contract's.
		long := strings.Repeat("ç", 65)
		if got := fieldCodes(t, b.call("POST", path, map[string]any{"notice_id": long}).want(t, 422)); got["notice_id"] != "too_long" {
			t.Fatalf("a notice id of 65 characters: %v", got)
		}
		b.call("POST", path, map[string]any{"notice_id": long[2:]}).want(t, 409)
		// Another company's notice of the same id is its own.
		if r := b.send(b.sandbox.URL, b.otherToken, "POST", path, rest, nil); r.Status != 404 {
			t.Fatalf("another company's notice: %d %s", r.Status, r.Body)
		}
	})
}
