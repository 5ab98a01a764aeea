package web

import (
	"strings"
	"testing"

	"parcela"
)

// An installment's Pix or boleto shown on the order's page is paid
// elsewhere (the bank's app), as the down payment's is: the page checks
// for the payment, as the down payment's and the bill's checkout do, so a
// payer back from the bank's app reads it paid rather than the same code
// still due, and pays again. It checked only while the billing waited for
// its down payment.
func TestOrderPageChecksForAnInstallmentsPayment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	second, boleto := b.firstInstallmentBoleto(t)
	o := b.onlyOrder(t)
	orderPath := parcela.Links{}.OrderURL(o.ID, o.AccessCode)
	before := b.get(t, orderPath)
	if !strings.Contains(before.body, *boleto.PixCode) {
		t.Fatalf("the installment's boleto is not shown:\n%s", before.body)
	}
	if !strings.Contains(before.body, `data-refresh="1"`) || !strings.Contains(before.body, `<meta http-equiv="refresh" content="6">`) ||
		!strings.Contains(before.body, "Já pagou? Atualize a página") {
		t.Errorf("the page showing installment %d's boleto does not check for its payment", second.Number)
	}
	b.pay(t, boleto.ID)
	after := b.get(t, orderPath)
	if stateOf(after.body) == stateOf(before.body) {
		t.Errorf("the page's state %q does not change when the installment is paid", stateOf(after.body))
	}
	if strings.Contains(after.body, *boleto.PixCode) || strings.Contains(after.body, "data-refresh") {
		t.Error("the paid installment's code is still shown, or the page still checks")
	}
}
