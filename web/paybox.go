package web

import (
	"html/template"

	"parcela"
)

// payBox is a payment's box on the checkout, order and payment pages: its
// amount, why it differs from the code's, and its Pix and boleto codes
// with their images. It is written in Go (markup), not as a template: it
// was the hottest part of the checkout, about forty printing actions a
// box, each an escaper called through reflection. It reads as the
// template it replaced; the test renders both and compares them.
func payBox(v payView) template.HTML {
	m := markup{b: make([]byte, 0, 2048)}
	m.raw("\n<section class=\"pay-box\" aria-label=\"")
	switch {
	case v.PixCode != "" && v.Linha != "":
		m.raw("Pagamento com boleto ou Pix")
	case v.PixCode != "":
		m.raw("Pagamento com Pix")
	default:
		m.raw("Pagamento com boleto")
	}
	m.textIn("\">\n  <p class=\"pay-amount\">", brl(v.ShownCents()), "</p>")
	payNotes(&m, v)
	if v.PixCode != "" {
		payPix(&m, v)
	}
	if v.Linha != "" {
		payBoleto(&m, v)
	}
	m.raw("\n</section>\n")
	return template.HTML(m.b)
}

// payNotes says why the box's amount is not the code's: a late boleto's
// fine and interest, or what the code already received.
func payNotes(m *markup, v payView) {
	if v.Late() && v.PixCode == "" {
		m.textIn("\n  <p class=\"pay-note\">Este boleto venceu em ", date(v.DueDate), ": se pago hoje, o banco acrescenta a multa e os juros por atraso, ")
		if v.ReceivedCents != 0 {
			m.textIn("e falta pagar ", brl(v.LateCents), " (ele já recebeu ")
			m.text(brl(v.ReceivedCents))
			m.raw(").")
		} else {
			m.text(brl(v.LateCents))
			m.raw(" no total.")
		}
		m.raw("</p>")
		return
	}
	if v.DueCents != v.AmountCents {
		m.raw("\n  <p class=\"pay-note\">Este código foi emitido para ")
		m.text(brl(v.AmountCents))
		if v.ReceivedCents != 0 {
			m.raw(" e já recebeu ")
			m.text(brl(v.ReceivedCents))
		}
		m.textIn(": falta pagar ", brl(v.DueCents), ". Se o seu banco cobrar o valor do código, o que passar do devido fica registrado para devolução.</p>")
	}
	if v.Late() {
		m.textIn("\n  <p class=\"pay-note\">Pelo Pix, ", brl(v.DueCents), ". O boleto venceu em ")
		m.text(date(v.DueDate))
		m.textIn(": pelo código de barras, se pago hoje, o banco acrescenta a multa e os juros por atraso, ", brl(v.LateCents), " no total.</p>")
	}
}

// payPix is the Pix's QR Code, its copy-and-paste code and, for a Pix
// payment, the time left to pay it.
func payPix(m *markup, v payView) {
	m.raw("\n  <div class=\"pix\">\n    <h3>Pix</h3>\n    <img class=\"qr\" src=\"")
	m.url(v.PixImage)
	m.raw("\" alt=\"QR Code Pix de ")
	m.text(brl(v.AmountCents))
	m.raw("\" width=\"264\" height=\"264\">\n    <ol class=\"steps\">\n" +
		"      <li>Abra o app do seu banco e escolha pagar com Pix.</li>\n" +
		"      <li>Leia o QR Code ou cole o código abaixo.</li>\n    </ol>\n    <label for=\"pix-")
	m.text(v.ID)
	m.textIn("\">Pix copia e cola</label>\n    <textarea id=\"pix-", v.ID, "\" class=\"code\" rows=\"")
	m.int(codeRows(v.PixCode))
	m.textIn("\" readonly>", v.PixCode, "</textarea>\n    <button type=\"button\" class=\"button secondary js-only\" data-copy=\"pix-")
	m.text(v.ID)
	m.raw("\">Copiar código Pix</button>")
	if v.Method == "pix" {
		m.textIn("\n    <p class=\"time-left\">Expira em <strong data-expires-at=\"", v.ExpiresAtISO(), "\" data-now=\"")
		m.text(v.NowISO())
		m.textIn("\">", v.TimeLeft, "</strong> (")
		m.text(dateTime(v.LastPayable()))
		m.raw(").</p>")
	}
	m.raw("\n  </div>")
}

// payBoleto is the boleto's barcode, its linha digitável and its due
// date.
func payBoleto(m *markup, v payView) {
	linha := formatLinha(v.Linha)
	m.raw("\n  <div class=\"boleto\">\n    <h3>Boleto</h3>\n    <img class=\"barcode\" src=\"")
	m.url(v.BarcodeImage)
	m.textIn("\" alt=\"Código de barras do boleto\" width=\"410\" height=\"50\">\n    <label for=\"linha-", v.ID, "\">Linha digitável</label>\n    <textarea id=\"linha-")
	m.text(v.ID)
	m.raw("\" class=\"code linha\" rows=\"")
	m.int(codeRows(linha))
	m.textIn("\" readonly>", linha, "</textarea>\n    <button type=\"button\" class=\"button secondary js-only\" data-copy=\"linha-")
	m.text(v.ID)
	due := date(v.DueDate)
	m.textIn("\">Copiar linha digitável</button>\n    <p class=\"time-left\">Vencimento: <strong>", due, "</strong>")
	if until := date(parcela.BoletoPayableUntil(v.DueDate)); until != due {
		// Due on a weekend or holiday: banks take it through the next
		// business day, as the checkout's "Pagável até" says (an audit).
		m.textIn(" (pagável até <strong>", until, "</strong>, próximo dia útil)")
	}
	m.raw(". Pague no app do banco, internet banking ou lotérica.</p>\n  </div>")
}
