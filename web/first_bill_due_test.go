package web

import (
	"html"
	"strings"
	"testing"

	"parcela"
)

// A first bill to be paid by Pix or card is due the charge plus its
// configuration's hours, and lapses at that instant: its pages name the
// time with the date (the clock reads 05/03/2026 10:00, the hours are 72).
// By the date alone, 08/03/2026 read as the whole day to pay, and a payer
// back at noon found the order canceled. A boleto's first bill is payable
// through its day's end, and an installment through its due day's: their
// dates stand alone.
func TestFirstBillDueShowsItsTime(t *testing.T) {
	t.Parallel()
	for option, want := range map[string]string{
		testUpfront + ":pix":          "08/03/2026 às 10:00",
		testFinanced + ":credit_card": "08/03/2026 às 10:00",
		testFinanced + ":pix":         "08/03/2026 às 10:00",
		testUpfront + ":boleto":       "08/03/2026",
		testFinanced + ":boleto":      "08/03/2026",
	} {
		b := setup(t)
		b.buy(t, option)
		o := b.onlyOrder(t)
		first := o.Billings[0].Bills[0]
		checkout := html.UnescapeString(b.get(t, parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode)).body)
		if !strings.Contains(checkout, "<dt>Vencimento</dt><dd>"+want+"</dd>") {
			t.Errorf("%s: the checkout's due date is not %q", option, want)
		}
		order := html.UnescapeString(b.get(t, parcela.Links{}.OrderURL(o.ID, o.AccessCode)).body)
		for _, part := range []string{`<span class="due-date">· vence ` + want + `</span>`, `<td class="date-column">` + want + `</td>`} {
			if strings.HasPrefix(option, testFinanced) && strings.HasSuffix(option, ":credit_card") && strings.Contains(part, "due-date") {
				continue // a card's down payment is paid on the checkout: the order page shows no code for it
			}
			if !strings.Contains(order, part) {
				t.Errorf("%s: the order page lacks %q", option, part)
			}
		}
		if strings.HasPrefix(option, testFinanced) && !strings.Contains(order, `<td class="date-column">10/05/2026</td>`) {
			t.Errorf("%s: an installment's due date is not its date alone", option)
		}
	}
}

// The offer page's plan says when the down payment lapses too: bought by
// Pix or card, at the charge plus the configuration's hours, where "até
// 08/03/2026" read as the whole day to pay. A configuration whose only
// down payment is a boleto, payable through its day's end, shows the date
// alone.
func TestOfferPlanShowsTheDownPaymentsTime(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		methods []string
		want    string
	}{
		{[]string{"pix", "boleto", "credit_card"}, "até 08/03/2026, 72 h após a compra"},
		{[]string{"boleto", "credit_card"}, "até 08/03/2026, 72 h após a compra"},
		{[]string{"boleto"}, "até 08/03/2026"},
	} {
		b := setup(t)
		b.offer.PaymentConfigurations[1].AllowedDownPaymentMethods = tt.methods
		page := html.UnescapeString(b.get(t, b.offerPath()).body)
		if !strings.Contains(page, `<td class="date-column">`+tt.want+`</td>`) {
			t.Errorf("down payment by %v: the plan's first row is not due %q: %s", tt.methods, tt.want, page[strings.Index(page, "Entrada<"):][:300])
		}
	}
}
