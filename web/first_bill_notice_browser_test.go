package web

import (
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/web/browsertest"
)

// A boleto first bill through its last days, in Chromium: in its
// settlement grace the checkout names the boleto's last day and shows it;
// past it, waiting for the bank's notice, the checkout says a payment made
// in time is still to be confirmed, offers nothing, and checks for it.
func TestBrowserFirstBillThroughItsBoletosGraceAndNotice(t *testing.T) {
	b := setup(t)
	first := b.firstBoletoWithItsGrace(t) // due Sunday 8 March 2026, payable through Monday 9, the grace Tuesday 10
	tb := browsertest.Open(t, b.server.URL)
	checkout := parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode)

	b.clock.Set(time.Date(2026, 3, 10, 10, 0, 0, 0, parcela.SaoPaulo)) // Tuesday, the grace
	tb.Open(checkout)
	if text := tb.Eval(`document.querySelector(".bill-card").innerText`); !strings.Contains(text, "10/03/2026 (prazo do boleto)") {
		t.Errorf("in the grace: %q", text)
	}
	tb.Shots("first-bill-boleto-grace")

	b.clock.Set(time.Date(2026, 3, 11, 10, 0, 0, 0, parcela.SaoPaulo)) // Wednesday, the notice's day
	tb.Open(checkout)
	text := tb.Eval(`document.querySelector("main").innerText`)
	if !strings.Contains(text, "Prazo encerrado") || !strings.Contains(text, "Se você já pagou") || strings.Contains(text, "novo pedido") {
		t.Errorf("waiting for the notice: %q", text)
	}
	if tb.Is(`document.body.getAttribute("data-refresh") === null`) {
		t.Error("the checkout waiting for the notice does not check for the payment")
	}
	tb.Shots("first-bill-boleto-notice")
}

// A boleto due on a Sunday, in Chromium: on the Sunday its box names the
// Monday as its last payable day, beside the due date printed on it.
func TestBrowserWeekendBoletoNamesItsLastPayableDay(t *testing.T) {
	b := setup(t)
	first := b.firstBoletoWithItsGrace(t) // due Sunday 8 March 2026, payable through Monday 9
	tb := browsertest.Open(t, b.server.URL)
	b.clock.Set(time.Date(2026, 3, 8, 20, 0, 0, 0, parcela.SaoPaulo))
	tb.Open(parcela.Links{}.CheckoutURL(first.ID, first.AuthenticationCode))
	if text := tb.Eval(`document.querySelector(".boleto").innerText`); !strings.Contains(text, "Vencimento: 08/03/2026 (pagável até 09/03/2026, próximo dia útil)") {
		t.Errorf("the boleto's box on its Sunday: %q", text)
	}
	tb.Shots("weekend-boleto")
}
