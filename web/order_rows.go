package web

import "html/template"

// billRows is the order page's table of its bills, one row each: label
// (linked to the bill's checkout while it can be paid), due date, amount
// and status. Written in Go (markup) as the checkout's parts are: the
// order page is where a Pix or boleto buyer waits, and its script fetches
// the page again every few seconds while a payment is awaited, so every
// waiting payer renders it over and over; a financed order's twelve rows
// were some 170 printing actions, each an escaper or a function called
// through reflection. The test renders the template it replaced
// (testdata/order-rows.html) beside it and compares them.
func billRows(rows []billRow) template.HTML {
	m := markup{b: make([]byte, 0, 640*len(rows))}
	for _, r := range rows {
		m.raw("\n      <tr>\n        <td>")
		if r.CheckoutURL != "" {
			m.raw("<a href=\"")
			m.url(r.CheckoutURL)
			m.textIn("\">", r.Label, "</a>")
		} else {
			m.text(r.Label)
		}
		// On a phone the date and the status go under the label: four
		// columns do not fit.
		due := dueWhen(r.DueDate, r.EffectiveDueDate)
		m.textIn("\n          <span class=\"narrowest-only\"><br>", due, "</span>\n          <span class=\"narrow-only\"><br>")
		statusBadge(&m, r)
		m.textIn("</span></td>\n        <td class=\"date-column\">", due, "</td>\n        <td class=\"num\">")
		m.text(brlCell(r.AmountCents))
		m.raw("</td>\n        <td class=\"wide-only\">")
		statusBadge(&m, r)
		m.raw("</td>\n      </tr>")
	}
	return template.HTML(m.b)
}

// statusBadge is a bill's status badge, and when it was paid.
func statusBadge(m *markup, r billRow) {
	m.textIn("<span class=\"badge ", r.Class, "\">")
	m.text(r.StatusLabel)
	m.raw("</span>")
	if r.PaidAt != nil {
		m.textIn(" <span class=\"paid-at\">em ", date(*r.PaidAt), "</span>")
	}
}
