package main

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"parcela/sqldb/sqldbtest"
)

// A bill that has received part of its amount (a settlement below a
// payment's amount) owes the rest: its checkout shows that, and the card
// is charged exactly what the page showed.
func TestCheckoutShowsWhatACardCharges(t *testing.T) {
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			s := newShop(t, e, nil)
			order := s.chargedOrder("pix", 1)
			billID := bills(order)[0]
			bill := s.api("GET", "/bills/"+billID, "", 200)
			pix := payments(bill)[0]["id"].(string)
			s.api("POST", "/sandbox/payments/"+pix+"/pay", `{"paid_amount_cents": 50000}`, 200)

			checkout := path(t, bill["checkout_url"].(string))
			pages := newPages(t, s.ts.sandbox)
			status, _, page := pages.do("GET", checkout, nil)
			if status != 200 {
				t.Fatalf("checkout: %d", status)
			}
			text := strings.Join(strings.Fields(strings.ReplaceAll(page, "\u00a0", " ")), " ")
			for _, want := range []string{"R$ 500,00", `<td class="num total">R$ 1.490,00</td>`, "2× de R$ 745,00 sem juros", "Pagar R$ 1.490,00 no cartão"} {
				if !strings.Contains(text, want) {
					t.Errorf("the checkout does not show %q", want)
				}
			}
			action := strings.Split(checkout, "?")[0] + "/card"
			status, _, _ = pages.postForm(checkout, action, url.Values{"card_number": {"4111 1111 1111 1111"}, "card_name": {"MARIA DA SILVA"},
				"card_month": {"12"}, "card_year": {strconv.Itoa(time.Now().Year() + 3)}, "card_cvv": {"123"}, "card_installments": {"2"}})
			if status != 303 {
				t.Fatalf("card: %d", status)
			}
			for _, p := range payments(s.api("GET", "/bills/"+billID, "", 200)) {
				if p["payment_method"] == "credit_card" && p["amount_cents"] != float64(149000) {
					t.Fatalf("the card was charged %v cents, the page showed 149000", p["amount_cents"])
				}
			}
		})
	}
}
