package server_test

import (
	"strings"
	"testing"
)

// A first bill's boleto that received part of the bill, then expired (its
// order lapsed): the bill is canceled with money received. The order and
// checkout pages say so, and the payment page of the very boleto that took
// the money too (it did only for a payment canceled, not expired: a review).
func TestExpiredBoletoWithPartReceivedTellsTheRefund(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		order, bill := b.upfrontBoletoOnThursday(t)
		pid := openPayment(t, bill)["id"].(string)
		b.call("POST", "/external_api/v1/sandbox/payments/"+pid+"/pay", map[string]any{"paid_amount_cents": 1000}).want(t, 200)
		b.at(t, "2026-12-03 00:00")
		got := b.bill(t, bill["id"].(string))
		if got["status"] != "canceled" || got["received_amount_cents"] != float64(1000) {
			t.Fatalf("scenario: bill %v received %v", got["status"], got["received_amount_cents"])
		}
		for _, p := range got["payments"].([]any) {
			if p := p.(map[string]any); p["id"] == pid && p["status"] != "expired" {
				t.Fatalf("scenario: the boleto is %v, want expired", p["status"])
			}
		}
		u := order["url"].(string)
		for name, path := range map[string]string{
			"order":    u[strings.Index(u, "/pay/"):],
			"payment":  "/checkout/payments/" + pid,
			"checkout": "/checkout/bills/" + bill["id"].(string) + "?code=" + bill["authentication_code"].(string),
		} {
			if page := b.payerPage(t, path); !strings.Contains(page, "Foram recebidos R$\u00a010,00 antes do cancelamento") {
				t.Errorf("the %s page says nothing of the R$ 10,00 received on the canceled bill", name)
			}
		}
	})
}
