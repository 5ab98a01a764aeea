package web

import (
	"html/template"

	"parcela"
)

// The checkout's bill card and its ways to pay, written in Go (markup) as
// the payment box is: with the box and the layout, they were most of the
// checkout's printing actions, and the checkout is the page payers open
// most (a link in every bill's reminder). The rest of the page (outcomes,
// notices, the card form) stays in its template. Each reads as the
// template it replaced; the test renders both and compares them.

// billCard is what the bill is: its product, label, due date and status,
// a link to its order, and what paying it now takes, line by line.
func billCard(v checkoutPage) template.HTML {
	m := markup{b: make([]byte, 0, 1536)}
	m.raw("<section class=\"card bill-card\">")
	if v.Product != nil {
		m.textIn("<p class=\"eyebrow\">", v.Product.Name, "</p>")
	}
	m.textIn("\n  <h1>", v.Label, "</h1>\n  <dl class=\"facts\">\n    <div><dt>Vencimento</dt><dd>")
	m.text(dueWhen(v.Bill.DueDate, v.Bill.EffectiveDueDate))
	m.raw("</dd></div>")
	if !v.PayableUntil.IsZero() {
		m.textIn("\n    <div><dt>", v.PayableLabel, "</dt><dd>")
		m.text(dayOrTime(v.PayableUntil))
		m.textIn(" (", v.PayableNote, ")</dd></div>")
	}
	m.textIn("\n    <div><dt>Situação</dt><dd><span class=\"badge ", v.Class, "\">")
	m.text(v.Status)
	m.raw("</span></dd></div>\n  </dl>")
	if v.OrderURL != "" {
		m.raw("\n  <p class=\"order-link\"><a href=\"")
		m.url(v.OrderURL)
		m.raw("\">Ver meu pedido</a>: a situação da compra e todos os pagamentos.</p>")
	}
	if v.NotPayable == "" {
		amountTable(&m, v)
	}
	m.raw("\n</section>")
	return template.HTML(m.b)
}

// amountTable is what paying the bill now takes: its amount, the fine
// and interest of a late one, less what its payments received.
func amountTable(m *markup, v checkoutPage) {
	m.raw("\n  <table class=\"amount-table\">\n    <caption>Valor a pagar hoje</caption>\n    <tbody>\n" +
		"      <tr><th scope=\"row\">Valor original</th><td class=\"num\">")
	m.text(brl(v.Bill.AmountCents))
	m.raw("</td></tr>")
	if v.Penalty.FineCents != 0 {
		m.textIn("<tr><th scope=\"row\">Multa por atraso</th><td class=\"num\">", brl(v.Penalty.FineCents), "</td></tr>")
	}
	if v.Penalty.InterestCents != 0 {
		m.textIn("<tr><th scope=\"row\">Juros de ", pluralOf(v.Penalty.DaysLate, "dia", "dias"), " desde ")
		m.text(date(v.LateSince))
		m.textIn("</th><td class=\"num\">", brl(v.Penalty.InterestCents), "</td></tr>")
	}
	if v.Received != 0 {
		m.textIn("<tr><th scope=\"row\">Já recebido</th><td class=\"num\">−", brl(v.Received), "</td></tr>")
	}
	m.textIn("\n    </tbody>\n    <tfoot><tr><th scope=\"row\">Total</th><td class=\"num total\">", brl(v.Current), "</td></tr></tfoot>\n  </table>")
}

// payWays is the forms that issue a Pix or a boleto for the bill, when
// its configuration takes either; "" when it takes neither.
func payWays(v checkoutPage) template.HTML {
	pix, boleto := v.Actions[parcela.MethodPix], v.Actions[parcela.MethodBoleto]
	if pix == "" && boleto == "" {
		return ""
	}
	m := markup{b: make([]byte, 0, 1536)}
	m.raw("\n<section class=\"card\" aria-labelledby=\"ways-title\">\n  <h2 id=\"ways-title\">Formas de pagamento</h2>\n  <div class=\"ways\">")
	if pix != "" {
		wayForm(&m, v, pix, "Pagar com Pix", "QR Code e copia e cola; confirmação em instantes.")
	}
	if boleto != "" {
		wayForm(&m, v, boleto, "Pagar com boleto", "Confirmação em até 2 dias úteis.")
	}
	m.raw("\n  </div>\n</section>")
	return template.HTML(m.b)
}

// wayForm is one way's form: its button posts the bill's code, its
// order's when opened from it, and the form's token.
func wayForm(m *markup, v checkoutPage, action, button, hint string) {
	m.raw("\n  <form method=\"post\" action=\"")
	m.url(action)
	m.textIn("\" class=\"way\">\n    <input type=\"hidden\" name=\"code\" value=\"", v.Code, "\">")
	if v.OrderCode != "" {
		m.textIn("<input type=\"hidden\" name=\"order_code\" value=\"", v.OrderCode, "\">")
	}
	m.textIn("\n    <input type=\"hidden\" name=\"csrf\" value=\"", v.Token.Token, "\">\n    <input type=\"hidden\" name=\"nonce\" value=\"")
	m.text(v.Token.Nonce)
	m.textIn("\">\n    <button type=\"submit\" class=\"button secondary\">", button, "</button>\n    <p class=\"hint\">")
	m.text(hint)
	m.raw("</p>\n  </form>")
}
