package web

// The layout around every page's content: its head, the seller's header
// and footer. It is written in Go (markup), as the payment box is, for
// the same reason: every page prints it, a score of actions each calling
// an escaper or a function through reflection; the page's own content
// stays a template. It reads as the template it replaced; the test renders
// both and compares them.

// layoutHead writes the page up to its content.
func (a *assetSet) layoutHead(m *markup, p page) {
	m.raw("<!doctype html>\n<html lang=\"pt-BR\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
		"<meta name=\"robots\" content=\"noindex, nofollow\">\n<title>")
	m.text(p.Title)
	m.raw("</title>\n<link rel=\"stylesheet\" href=\"")
	m.url(a.url("app.css"))
	m.raw("\">\n<script src=\"")
	m.url(a.url("app.js"))
	m.raw("\" defer></script>")
	if p.Refresh != 0 && !p.ScriptRefreshOnly {
		// Without a script, the browser reloads a waiting page itself.
		m.raw("\n<noscript><meta http-equiv=\"refresh\" content=\"")
		m.int(p.MetaRefresh())
		m.raw("\"></noscript>")
	}
	m.textIn("\n</head>\n<body class=\"", p.Theme(), "\" data-state=\"")
	m.text(p.State)
	m.raw("\"")
	if p.Refresh != 0 {
		m.raw(" data-refresh=\"")
		m.int(p.Refresh)
		m.raw("\"")
	}
	m.raw(">\n<a class=\"skip-link\" href=\"#conteudo\">Pular para o conteúdo</a>")
	if p.Sandbox {
		m.raw("\n<div class=\"sandbox-banner\" role=\"note\"><strong>Ambiente de testes</strong> — nenhum pagamento aqui é real.</div>")
	}
	m.raw("\n<header class=\"site-header\">\n  <div class=\"wrap\">")
	if c := p.Company; c != nil {
		if logo := imageURL(c.Logo); logo != "" {
			m.raw("<img class=\"logo\" src=\"")
			m.url(logo)
			m.raw("\" alt=\"\" width=\"40\" height=\"40\">")
		} else {
			m.textIn("<span class=\"logo logo-initial\" aria-hidden=\"true\">", initial(c.Name), "</span>")
		}
		m.textIn("\n    <span class=\"company-name\">", c.Name, "</span>")
	} else {
		m.raw("\n    <span class=\"company-name\">Pagamento</span>")
	}
	m.raw("\n    <span class=\"secure-note\">Pagamento seguro</span>\n  </div>\n</header>\n" +
		"<main id=\"conteudo\" class=\"wrap\" tabindex=\"-1\">\n")
}

// layoutFoot writes the page after its content: the seller's name and
// document.
func layoutFoot(m *markup, p page) {
	m.raw("\n</main>\n<footer class=\"site-footer\"><div class=\"wrap\">")
	if c := p.Company; c != nil {
		m.raw("Vendido por ")
		m.text(c.Name)
		if c.Document != "" {
			m.raw(" · ")
			m.text(sellerDocument(c.Document))
		}
	}
	m.raw("\n</div></footer>\n</body>\n</html>\n")
}
