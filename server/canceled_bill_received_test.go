package server_test

import (
	"strings"
	"testing"
)

// A billing canceled after an installment's boleto received part of its
// amount: the API keeps what was received (the seller's to refund), and the
// payer's pages say so, where they said only that nothing need be paid,
// and the payer never learned of the R$ 10,00 paid (an audit).
func TestCanceledBillShowsThePayerWhatWasReceived(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		_, fin := configs(offer)
		oid := order["id"].(string)
		charged := b.call("POST", "/external_api/v1/orders/"+oid+"/charge", chargeBody(fin, "pix", 4)).want(t, 200).JSON(t)
		bills := billIDs(charged)
		b.pay(t, openPayment(t, b.bill(t, bills[0]))["id"].(string))
		b.at(t, "2027-01-01 08:00")
		pid := openPayment(t, b.bill(t, bills[1]))["id"].(string)
		b.call("POST", "/external_api/v1/sandbox/payments/"+pid+"/pay", map[string]any{"paid_amount_cents": 1000}).want(t, 200)
		billingID := charged["billings"].([]any)[0].(map[string]any)["id"].(string)
		b.call("POST", "/external_api/v1/billings/"+billingID+"/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}).want(t, 200)
		bill := b.bill(t, bills[1])
		if bill["received_amount_cents"] != float64(1000) || bill["status"] != "canceled" {
			t.Fatalf("API: bill %v received %v", bill["status"], bill["received_amount_cents"])
		}
		u := order["url"].(string)
		for name, path := range map[string]string{
			"order":    u[strings.Index(u, "/pay/"):],
			"payment":  "/checkout/payments/" + pid,
			"checkout": "/checkout/bills/" + bills[1] + "?code=" + bill["authentication_code"].(string),
		} {
			if page := b.payerPage(t, path); !strings.Contains(page, "Foram recebidos R$\u00a010,00 antes do cancelamento: fale com o vendedor para a devolução.") {
				t.Errorf("the %s page says nothing of the R$ 10,00 received on the canceled bill:\n%s", name, page)
			}
		}
	})
}
