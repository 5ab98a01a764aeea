package docsite

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
)

//go:embed guides
var guideFiles embed.FS

// Guide is one Markdown page under /docs/guides/.
type Guide struct{ Slug, Title, Summary string }

// Guides lists the guides in reading order; each is guides/{Slug}.md.
var Guides = []Guide{
	{"getting-started", "Getting started", "A sandbox order from product to paid bill, with curl and with the Go client."},
	{"webhooks", "Webhooks", "Subscribing, verifying signatures in Go, Node and Python, retries and replay."},
	{"payments-lifecycle", "Payments lifecycle", "The states of orders, billings, bills and payments, and the events they emit."},
	{"production", "Going to production", "What changes on the production listener, and a checklist."},
}

// markdown renders the guides (GitHub-flavoured: tables, autolinks) with
// heading anchors. Raw HTML in the sources is not passed through.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithAutoHeadingID()),
)

var layout = template.Must(template.New("layout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · parcela API</title>
<link rel="stylesheet" href="{{.CSS}}">
</head>
<body{{if .Scripts}} class="reference"{{end}}>
<header class="site"><a class="brand" href="/docs">parcela API</a>
<nav><a href="/docs">Reference</a> <a href="/docs/errors">Errors</a> <a href="/docs/guides">Guides</a>{{range .Guides}} <a class="guide" href="/docs/guides/{{.Slug}}">{{.Title}}</a>{{end}}</nav></header>
{{if .Scripts}}<div id="redoc"></div>
{{range .Scripts}}<script src="{{.}}"></script>
{{end}}{{else}}<main>
{{.Body}}
</main>
{{end}}</body>
</html>
`))

var errorsPage = template.Must(template.New("errors").Parse(`<h1>Errors</h1>
<p>Every error answer is an RFC 9457 problem (<code>application/problem+json</code>)
whose <code>type</code> links to its entry below: <code>{public address}/docs/errors#{code}</code>.
Clients should branch on <code>code</code>, not on <code>title</code> or <code>detail</code>,
and quote <code>request_id</code> to support.</p>
<table>
<thead><tr><th>Status</th><th>Code</th><th>Title</th></tr></thead>
<tbody>
{{range .Problems}}<tr><td>{{.Status}}</td><td><a href="#{{.Code}}"><code>{{.Code}}</code></a></td><td>{{.Title}}</td></tr>
{{end}}</tbody>
</table>
{{range .Problems}}<section class="problem" id="{{.Code}}">
<h2><a href="#{{.Code}}"><code>{{.Code}}</code></a> <span class="status">{{.Status}} {{.Title}}</span></h2>
<h3>Cause</h3>
{{.Cause}}
<h3>Fix</h3>
{{.Fix}}
</section>
{{end}}<section id="field-codes">
<h2>Field codes</h2>
<p>A <code>validation_failed</code> problem (and some others) lists every field at fault in
<code>errors[]</code>: <code>{"field": "offer.amount_cents", "code": "too_small", "message": "must be at least 500"}</code>.
<code>field</code> is the path of the field in the body, or the name of the query parameter or header.</p>
<dl>
{{range .Fields}}<dt id="field-{{.Code}}"><code>{{.Code}}</code></dt><dd>{{.Meaning}}</dd>
{{end}}</dl>
</section>
`))

var guidesIndex = template.Must(template.New("guides").Parse(`<h1>Guides</h1>
<ul class="guides">
{{range .}}<li><a href="/docs/guides/{{.Slug}}">{{.Title}}</a>: {{.Summary}}</li>
{{end}}</ul>
<p>The <a href="/docs">API reference</a> describes every operation, field and limit;
the <a href="/docs/errors">error catalogue</a> every problem code.</p>
`))

type pageData struct {
	Title   string
	CSS     string
	Guides  []Guide
	Scripts []string
	Body    template.HTML
}

// render builds every page once.
func (s *Site) render() error {
	page := func(path, title string, body template.HTML, scripts ...string) error {
		var buf bytes.Buffer
		data := pageData{Title: title, CSS: s.assets["site.css"].url(), Guides: Guides, Scripts: scripts, Body: body}
		if err := layout.Execute(&buf, data); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		s.pages[path] = newAsset(path, "text/html; charset=utf-8", buf.Bytes())
		return nil
	}
	if err := page("/docs", "Reference", "", s.assets["redoc.standalone.js"].url(), s.assets["reference.js"].url()); err != nil {
		return err
	}
	catalogue, err := renderErrors()
	if err != nil {
		return err
	}
	if err := page("/docs/errors", "Errors", catalogue); err != nil {
		return err
	}
	var index bytes.Buffer
	if err := guidesIndex.Execute(&index, Guides); err != nil {
		return err
	}
	if err := page("/docs/guides", "Guides", template.HTML(index.String())); err != nil {
		return err
	}
	for _, g := range Guides {
		src, err := guideFiles.ReadFile("guides/" + g.Slug + ".md")
		if err != nil {
			return err
		}
		var html bytes.Buffer
		if err := markdown.Convert(src, &html); err != nil {
			return fmt.Errorf("guide %s: %w", g.Slug, err)
		}
		if err := page("/docs/guides/"+g.Slug, g.Title, template.HTML(html.String())); err != nil {
			return err
		}
	}
	return nil
}

// renderErrors renders the catalogue; causes and fixes are Markdown.
func renderErrors() (template.HTML, error) {
	type entry struct {
		Problem
		Cause, Fix template.HTML
	}
	type field struct {
		Code    string
		Meaning template.HTML
	}
	var data struct {
		Problems []entry
		Fields   []field
	}
	for _, p := range Problems {
		cause, err := inline(p.Cause)
		if err != nil {
			return "", err
		}
		fix, err := inline(p.Fix)
		if err != nil {
			return "", err
		}
		data.Problems = append(data.Problems, entry{p, cause, fix})
	}
	for _, f := range FieldCodes {
		m, err := inline(f.Meaning)
		if err != nil {
			return "", err
		}
		data.Fields = append(data.Fields, field{f.Code, template.HTML(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(m)), "<p>"), "</p>"))})
	}
	var buf bytes.Buffer
	if err := errorsPage.Execute(&buf, data); err != nil {
		return "", err
	}
	return template.HTML(buf.String()), nil
}

func inline(md string) (template.HTML, error) {
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(md), &buf); err != nil {
		return "", err
	}
	return template.HTML(buf.String()), nil
}
