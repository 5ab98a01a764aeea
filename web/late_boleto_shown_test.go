package web

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"parcela"
)

// An installment's boleto, issued before its due date for its amount, is
// payable through the company's settlement grace, and the bank takes the
// bill's fine and interest with it once past the due date it carries
// (mover.pay, Bill.BoletoTakes). On the Saturday after its Friday due date
// the order page said "o valor abaixo já inclui a multa e os juros por
// atraso até hoje" above the boleto's bare amount, and the checkout showed
// that amount too. A plain boleto now shows what its barcode takes; a
// bolepix shows its Pix's amount (a Pix pays the code's amount) and says
// what the barcode takes; the order page makes its claim only when the
// amount below carries the penalty. The boleto's own page shows it as
// the checkout does.
func TestLateBoletoInItsGraceShowsWhatTheBankTakes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		pix      bool
		received int64
	}{{"bolepix", true, 0}, {"boleto", false, 0}, {"boleto paid in part", false, 5_000}, {"bolepix paid in part", true, 5_000}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			second := b.boletoPayableInItsGrace(t)
			b.store.mu.Lock()
			for _, p := range b.store.bills[second.ID].Payments {
				if p.Method == parcela.MethodBoleto && p.Status == parcela.PaymentUnpaid {
					p.PaidAmountCents = c.received
					if !c.pix {
						p.PixCode = nil
					}
				}
			}
			b.store.mu.Unlock()
			o := b.onlyOrder(t)
			var boleto string
			for _, p := range second.Payments {
				if p.Method == parcela.MethodBoleto && p.Status == parcela.PaymentUnpaid {
					boleto = p.ID
				}
			}
			// The order page, the bill's checkout, and the boleto's own page
			// (the url the API gives), which showed its bare amount.
			pages := []string{parcela.Links{}.OrderURL(o.ID, o.AccessCode), parcela.Links{}.CheckoutURL(second.ID, second.AuthenticationCode),
				parcela.Links{}.PaymentURL(boleto)}
			rest := second.AmountCents - c.received

			// On its due day the boleto asks its amount, and nothing is late.
			b.clock.Set(time.Date(2026, 4, 10, 12, 0, 0, 0, parcela.SaoPaulo))
			for _, path := range pages {
				body := html.UnescapeString(b.get(t, path).body)
				if want := `<p class="pay-amount">` + brl(rest) + `</p>`; !strings.Contains(body, want) || strings.Contains(body, "o banco acrescenta") {
					t.Errorf("%s on the due day: want the boleto's %s and no late note; it shows %v", path, brl(rest), payAmount.FindAllString(body, -1))
				}
			}

			second = b.overdue(second)
			b.clock.Set(time.Date(2026, 4, 11, 12, 0, 0, 0, parcela.SaoPaulo)) // Saturday after the Friday 10 April due date
			owes := second.Penalty(b.clock.Now(), b.company).Total(second.AmountCents) - c.received
			if owes <= rest {
				t.Fatal("no penalty: the scenario is wrong")
			}
			shown, note := owes, "Este boleto venceu em 10/04/2026: se pago hoje, o banco acrescenta a multa e os juros por atraso, "+brl(owes)+" no total."
			if c.received > 0 {
				note = "Este boleto venceu em 10/04/2026: se pago hoje, o banco acrescenta a multa e os juros por atraso, e falta pagar " + brl(owes) + " (ele já recebeu " + brl(c.received) + ")."
			}
			if c.pix {
				shown, note = rest, "Pelo Pix, "+brl(rest)+". O boleto venceu em 10/04/2026: pelo código de barras, se pago hoje, o banco acrescenta a multa e os juros por atraso, "+brl(owes)+" no total."
			}
			for _, path := range pages {
				body := html.UnescapeString(b.get(t, path).body)
				if want := `<p class="pay-amount">` + brl(shown) + `</p>`; !strings.Contains(body, want) || !strings.Contains(body, note) {
					t.Errorf("%s in the grace: want the box at %s with the note %q; it shows %v %v", path, brl(shown), note,
						payAmount.FindAllString(body, -1), payNote.FindAllString(body, -1))
				}
				if c.received > 0 && c.pix && !strings.Contains(body, "já recebeu "+brl(c.received)) {
					t.Errorf("%s: what the code received is not said", path)
				}
			}
			claim := strings.Contains(html.UnescapeString(b.get(t, pages[0]).body), "o valor abaixo já inclui a multa e os juros por atraso até hoje")
			if claim == c.pix {
				t.Errorf("the order page's claim that the amount below carries the late charges: %v, over a box of %s", claim, brl(shown))
			}
		})
	}
}

// An upfront bill's Pix is live while another payment of the bill (a
// boleto) received R$ 90,00. Its checkout showed the Pix for what the bill
// still owes ("falta pagar R$ 1.900,00", Bill.LeftToPayWith); the order
// page, where the payer lands after buying, showed the same Pix for its
// whole R$ 1.990,00, and the payer paid R$ 90,00 more than owed.
func TestOrderPageShowsWhatTheBillStillOwes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	orderPath := b.buy(t, testUpfront+":pix")
	bill := b.onlyOrder(t).Billings[0].Bills[0]
	b.boletoPaidInPart(t, bill, 199_000, 9_000)
	checkout := html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(bill.ID, bill.AuthenticationCode)).body)
	want := `<p class="pay-amount">` + brl(190_000) + `</p>`
	if !strings.Contains(checkout, want) {
		t.Fatalf("checkout lacks %q (the scenario is wrong)", want)
	}
	order := html.UnescapeString(b.get(t, orderPath).body)
	if !strings.Contains(order, want) || strings.Contains(order, `<p class="pay-amount">`+brl(199_000)+`</p>`) {
		t.Errorf("order page does not show the Pix for what the bill still owes (%s), as its checkout does; it shows %v",
			brl(190_000), payAmount.FindAllString(order, -1))
	}
}

var (
	payAmount = regexp.MustCompile(`<p class="pay-amount">[^<]*</p>`)
	payNote   = regexp.MustCompile(`<p class="pay-note">[^<]*</p>`)
)

// boletoPaidInPart issues bill another boleto of amount that received
// paid.
func (b *bundle) boletoPaidInPart(t *testing.T, bill *parcela.Bill, amount, paid int64) {
	t.Helper()
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	boleto, err := b.store.issue(b.store.bills[bill.ID], parcela.MethodBoleto, amount, bill.DueDate, false)
	if err != nil {
		t.Fatal(err)
	}
	boleto.PaidAmountCents = paid
}

// boletoPayableInItsGrace is the first installment, due Friday 10 April
// 2026, with its boleto payable through the company's settlement grace,
// as the domain issues it (the fake store expires it on its due date).
func (b *bundle) boletoPayableInItsGrace(t *testing.T) *parcela.Bill {
	t.Helper()
	bill, boleto := b.firstInstallmentBoleto(t)
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	for _, p := range b.store.bills[bill.ID].Payments {
		if p.ID == boleto.ID {
			p.ExpiresAt = parcela.PaymentExpiry(parcela.MethodBoleto, bill.DueDate, b.company.BoletoGraceBusinessDays)
		}
	}
	return b.store.billCopy(b.store.bills[bill.ID], false)
}

// overdue marks bill overdue, as the sweep does once its due date passed
// with a payment live.
func (b *bundle) overdue(bill *parcela.Bill) *parcela.Bill {
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	b.store.bills[bill.ID].Status = parcela.BillOverdue
	return b.store.billCopy(b.store.bills[bill.ID], false)
}
