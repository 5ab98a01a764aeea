package server_test

import (
	"context"
	"html"
	"net/url"
	"strings"
	"testing"
	"time"

	"parcela"
)

// An upfront boleto charged on Thursday 26 November 2026 at 15:30 is due
// Saturday at 15:30 and, the checkout says, "Pagável até 30/11/2026
// (próximo dia útil)"; the checkout offers a Pix beside it. A Pix asked
// for there on Saturday at 12:00 expired at 15:30 the same day, where one
// asked for at 16:00 ran to the end of Monday: a payer who copied the
// 12:00 code to pay on Monday, as the page's date says they may, had it
// refused by the bank (an audit). Both now run to the end of Monday.
func TestPixBesideAWeekendBoletoLastsAsLongAsThePageSays(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, bill := b.upfrontBoletoOnThursday(t)
		checkout := "/checkout/bills/" + bill["id"].(string) + "?code=" + bill["authentication_code"].(string)
		b.at(t, "2026-11-28 12:00") // Saturday, before the due instant (15:30)
		page := html.UnescapeString(b.payerPage(t, checkout))
		if !strings.Contains(page, "Pagável até</dt><dd>30/11/2026") || !strings.Contains(page, "Pagar com Pix") {
			t.Fatalf("the scenario is wrong: the checkout should say payable through Monday and offer a Pix")
		}
		p, err := b.app.Checkout.IssuePayment(context.Background(), parcela.Sandbox, bill["id"].(string), bill["authentication_code"].(string), parcela.MethodPix)
		if err != nil {
			t.Fatal(err)
		}
		lastDay := time.Date(2026, 12, 1, 0, 0, 0, 0, parcela.SaoPaulo) // the end of Monday 30/11, as a Pix asked for at 16:00 gets
		if p.ExpiresAt.Before(lastDay) {
			t.Errorf("a Pix generated on Saturday 12:00 expires %v, beside \"Pagável até 30/11/2026\" (one generated at 16:00 expires %v)",
				p.ExpiresAt.In(parcela.SaoPaulo), lastDay)
		}
	})
}

// The boleto's own page says it is payable through Monday, as its
// checkout does: it said only "Vencimento: 28/11/2026", a Saturday.
func TestWeekendBoletosPageNamesItsLastPayableDay(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		_, bill := b.upfrontBoletoOnThursday(t)
		u, err := url.Parse(openPayment(t, bill)["url"].(string))
		if err != nil {
			t.Fatal(err)
		}
		b.at(t, "2026-11-28 18:00")
		page := html.UnescapeString(b.payerPage(t, u.RequestURI()))
		if !strings.Contains(page, "Vencimento: <strong>28/11/2026</strong> (pagável até <strong>30/11/2026</strong>, próximo dia útil)") {
			t.Errorf("the boleto's page on Saturday evening does not name Monday as its last payable day:\n%s", page)
		}
	})
}
