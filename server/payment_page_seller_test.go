package server_test

import (
	"strings"
	"testing"

	"parcela"
)

// A payment's own page, read from the store, names its seller as the
// checkout does: the store's bill carries its company's rates alone, and
// the page named nobody.
func TestPaymentPageNamesTheSellerFromTheStore(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, ids := b.chargedNearMonthEnd(t, 72, "boleto")
		p := openPayment(t, b.bill(t, ids[0]))
		page := b.payerPage(t, parcela.Links{}.PaymentURL(p["id"].(string)))
		if want := `<span class="company-name">` + b.company.Name + `</span>`; !strings.Contains(page, want) {
			t.Errorf("the payment page lacks %q", want)
		}
		if !strings.Contains(page, "Vendido por "+b.company.Name) {
			t.Error("the payment page names no seller in its footer")
		}
	})
}
