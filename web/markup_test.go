package web

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"html/template"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parcela"
)

// payBox replaced the template kept in testdata/pay-box.html: for every
// kind of box (Pix, boleto, bolepix; on time, late, partly received) and
// for values no payment holds (markup, quotes, NUL, a plus sign, runes
// html/template treats apart, addresses of other schemes, broken percent
// escapes, amounts at int64's edges), the two write the same bytes.
func TestPayBoxWritesWhatItsTemplateWrote(t *testing.T) {
	t.Parallel()
	ref := template.Must(template.New("ref").Funcs(template.FuncMap{
		"brl": brl, "date": date, "dateTime": dateTime, "codeRows": codeRows, "linha": formatLinha,
		"payableUntil": func(due time.Time) string {
			if until := date(parcela.BoletoPayableUntil(due)); until != date(due) {
				return until
			}
			return ""
		},
	}).ParseFiles("testdata/pay-box.html"))

	now := time.Date(2026, time.December, 31, 23, 59, 0, 0, parcela.SaoPaulo)
	texts := []string{"", "00020126360014br.gov.bcb.pix0114112223330001815204000053039865406163.225802BR",
		"00191010050000000160200112345673114120000016322", `<script>alert("x")</script>`, "a&b'c+d", "nul\x00byte",
		"\ufdd0\ufffe\U0001F600 é", "\xff\xfe invalid", "c9c14855-f464-4425-b9c0-11d74c8de0a2"}
	urls := []string{"", "/external_api/v1/payments/c9c14855/pix.png", "https://cdn.example/a b?x=1&y=<2>", "javascript:alert(1)",
		"JavaScript:x", "data:image/png;base64,AAAA", "/a/b:c", "%", "%4", "%41", "a%zz", "/caf\u00e9'\"", "mailto:x@y", "/x%4"}
	cents := []int64{0, 1, 16322, 99999999999, -1, math.MaxInt64, math.MinInt64 + 1}
	times := []time.Time{{}, now, parcela.ExpiryAfter(now), now.Add(90 * time.Minute), time.Date(2027, time.February, 28, 0, 0, 0, 0, time.UTC)}
	methods := []string{parcela.MethodPix, parcela.MethodBoleto, "<pix>"}

	rng := rand.New(rand.NewPCG(18, 2026))
	pick := func(n int) int { return rng.IntN(n) }
	for i := range 20000 {
		v := payView{
			ID: texts[pick(len(texts))], Method: methods[pick(len(methods))],
			AmountCents: cents[pick(len(cents))], DueCents: cents[pick(len(cents))],
			LateCents: cents[pick(len(cents))], ReceivedCents: cents[pick(len(cents))],
			PixCode: texts[pick(len(texts))], PixImage: urls[pick(len(urls))],
			Linha: texts[pick(len(texts))], BarcodeImage: urls[pick(len(urls))],
			ExpiresAt: times[pick(len(times))], DueDate: times[pick(len(times))],
			TimeLeft: texts[pick(len(texts))], Now: times[pick(len(times))],
		}
		// Most boxes owe what their code carries: make the equal case
		// common, so the notes' every branch is met.
		if pick(2) == 0 {
			v.DueCents = v.AmountCents
		}
		sameAsTemplate(t, ref, "pay-box", v, string(payBox(v)), i)
	}
}

// The url and text escapes alone, on every byte: what a template writes
// in a src attribute and in text.
func TestMarkupEscapesEveryByteAsTheTemplate(t *testing.T) {
	t.Parallel()
	ref := template.Must(template.New("ref").Parse(`<img src="{{.}}" alt="{{.}}"><textarea>{{.}}</textarea><p>{{.}}</p>`))
	for c := range 256 {
		for _, s := range []string{string(rune(c)), string([]byte{byte(c)}), "/p?q=" + string([]byte{byte(c)}) + "%", "%" + string([]byte{byte(c)}) + "1x", "x%" + string([]byte{byte(c)})} {
			var m markup
			m.raw(`<img src="`)
			m.url(s)
			m.raw(`" alt="`)
			m.text(s)
			m.raw(`"><textarea>`)
			m.text(s)
			m.raw(`</textarea><p>`)
			m.text(s)
			m.raw(`</p>`)
			var want bytes.Buffer
			if err := ref.Execute(&want, s); err != nil {
				t.Fatal(err)
			}
			if string(m.b) != want.String() {
				t.Errorf("%q:\n got %q\nwant %q", s, m.b, want.String())
			}
		}
	}
}

// The layout written in Go (layout.go) writes what the template kept in
// testdata/layout.html wrote, around the same content, for every kind of
// page (sandbox or not; a seller or none, with a logo of every kind of
// address, a document of every length; waiting or not) and for values no
// seller holds.
func TestLayoutWritesWhatItsTemplateWrote(t *testing.T) {
	t.Parallel()
	a := loadAssets()
	ref := template.Must(template.Must(template.New("ref").Funcs(template.FuncMap{
		"asset": a.url, "imageURL": imageURL, "initial": initial, "document": sellerDocument,
	}).ParseFiles("testdata/layout.html")).Parse(`{{define "content"}}<p>{{.}}</p>{{end}}`))

	texts := []string{"", "Escola Demonstração", `<b>"A&B" 'c'+d</b>`, "nul\x00", "\xff", "ß"}
	logos := []string{"", "https://cdn.example/logo.png", "http://plain.example/l.png", "/pay/logo.png", "//evil.example/x",
		"https://cdn.example/a b\"<x>", "javascript:alert(1)", "/a%zz%4"}
	docs := []string{"", "11222333000181", "12345678909", "123", "<1234567890>"}
	palettes := []string{"", "blue", "nope", "<x>"}
	rng := rand.New(rand.NewPCG(18, 2027))
	pick := func(n int) int { return rng.IntN(n) }
	for i := range 5000 {
		p := page{Title: texts[pick(len(texts))], Sandbox: pick(2) == 0, Refresh: []int{0, 5, -1}[pick(3)],
			State: texts[pick(len(texts))], Content: texts[pick(len(texts))], ScriptRefreshOnly: pick(2) == 0}
		if pick(4) != 0 {
			p.Company = &parcela.Company{Name: texts[pick(len(texts))], Logo: logos[pick(len(logos))],
				Document: docs[pick(len(docs))], Palette: palettes[pick(len(palettes))], Dark: pick(2) == 0}
		}
		var m markup
		a.layoutHead(&m, p)
		m.raw("<p>")
		m.text(p.Content.(string))
		m.raw("</p>")
		layoutFoot(&m, p)
		sameAsTemplate(t, ref, "layout", p, string(m.b), i)
	}
}

// The checkout's bill card and ways to pay written in Go
// (checkout_parts.go) write what the templates kept in
// testdata/checkout-parts.html wrote, for every kind of bill (a product
// or none; payable or not; on time, late, partly received; due on a
// business day or not; opened from its order or not; Pix, boleto, both or
// neither) and for values no bill holds.
func TestCheckoutPartsWriteWhatTheirTemplatesWrote(t *testing.T) {
	t.Parallel()
	ref := template.Must(template.New("ref").Funcs(template.FuncMap{
		"brl": brl, "date": date, "dueWhen": dueWhen, "plural": plural, "dayOrTime": dayOrTime,
	}).ParseFiles("testdata/checkout-parts.html"))

	day := time.Date(2026, time.December, 31, 0, 0, 0, 0, parcela.SaoPaulo)
	texts := []string{"", "Parcela 1 de 11", `<i>"x"&'y'+z</i>`, "nul\x00", "\xff", "Situação"}
	urls := []string{"", "/checkout/bills/b1/pix", "/orders/o 1?code=a&b", "javascript:x", "/x%4"}
	cents := []int64{0, 1, 16322, -5, math.MaxInt64}
	times := []time.Time{{}, day, parcela.EndOfDay(day), day.Add(13*time.Hour + 25*time.Minute), time.Date(2028, time.February, 29, 3, 0, 0, 0, time.UTC)}
	days := []int64{0, 1, 2, 31, -1}
	rng := rand.New(rand.NewPCG(18, 2028))
	pick := func(n int) int { return rng.IntN(n) }
	for i := range 20000 {
		due := times[pick(len(times))]
		v := checkoutPage{
			Bill:  &parcela.Bill{DueDate: due, EffectiveDueDate: []time.Time{due, times[pick(len(times))]}[pick(2)], AmountCents: cents[pick(len(cents))]},
			Label: texts[pick(len(texts))], Status: texts[pick(len(texts))], Class: texts[pick(len(texts))],
			Penalty:      parcela.Penalty{FineCents: cents[pick(len(cents))], InterestCents: cents[pick(len(cents))], DaysLate: days[pick(len(days))]},
			LateSince:    times[pick(len(times))],
			PayableUntil: times[pick(len(times))], PayableLabel: texts[pick(len(texts))], PayableNote: texts[pick(len(texts))],
			Received: cents[pick(len(cents))], Current: cents[pick(len(cents))],
			NotPayable: []string{"", texts[pick(len(texts))]}[pick(2)],
			Code:       texts[pick(len(texts))], OrderCode: texts[pick(len(texts))], OrderURL: urls[pick(len(urls))],
			Token:   formToken{Nonce: texts[pick(len(texts))], Token: texts[pick(len(texts))]},
			Actions: map[string]string{},
		}
		if pick(2) == 0 {
			v.Product = &parcela.Product{Name: texts[pick(len(texts))]}
		}
		for _, method := range []string{parcela.MethodPix, parcela.MethodBoleto, parcela.MethodCreditCard} {
			if pick(2) == 0 {
				v.Actions[method] = urls[pick(len(urls))]
			}
		}
		for name, got := range map[string]template.HTML{"bill-card": billCard(v), "ways": payWays(v)} {
			sameAsTemplate(t, ref, name, v, string(got), i)
		}
	}
}

// markup.raw, and textIn around its value, write unescaped, so they take
// only literals: every such argument in the package's code is a string
// literal, or literals joined with +. A value written unescaped would skip
// the escaping the comparisons above hold the parts to.
func TestMarkupRawTakesOnlyLiterals(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var literal func(ast.Expr) bool
	literal = func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.BasicLit:
			return e.Kind == token.STRING
		case *ast.BinaryExpr:
			return e.Op == token.ADD && literal(e.X) && literal(e.Y)
		case *ast.ParenExpr:
			return literal(e.X)
		}
		return false
	}
	calls := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if fn, ok := n.(*ast.FuncDecl); ok && fn.Name.Name == "textIn" {
				return false // its raw calls write the literals its callers give it
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			var unescaped []ast.Expr // the arguments written as they are
			switch {
			case sel.Sel.Name == "raw" && len(call.Args) == 1:
				unescaped = call.Args
			case sel.Sel.Name == "textIn" && len(call.Args) == 3:
				unescaped = []ast.Expr{call.Args[0], call.Args[2]}
			case sel.Sel.Name == "raw" || sel.Sel.Name == "textIn":
				t.Errorf("%s: %s with %d arguments", fset.Position(call.Pos()), sel.Sel.Name, len(call.Args))
			}
			for _, arg := range unescaped {
				calls++
				if !literal(arg) {
					t.Errorf("%s: %s writes unescaped something other than a literal", fset.Position(arg.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
	if calls < 50 {
		t.Fatalf("found %d calls of raw: the parts are not where this test looks", calls)
	}
}

// The order page's bill rows written in Go (order_rows.go) write what the
// template kept in testdata/order-rows.html wrote: rows linked or not,
// paid or not, due at a day's end or at an instant, and values no bill
// holds.
func TestBillRowsWriteWhatTheirTemplateWrote(t *testing.T) {
	t.Parallel()
	ref := template.Must(template.New("ref").Funcs(template.FuncMap{
		"dueWhen": dueWhen, "brlCell": brlCell, "date": date,
	}).ParseFiles("testdata/order-rows.html"))

	day := time.Date(2027, time.December, 31, 0, 0, 0, 0, parcela.SaoPaulo)
	texts := []string{"", "Parcela 11 de 11", `<b>"x"&'y'+z</b>`, "nul\x00", "\xff", "Pago"}
	urls := []string{"", "/checkout/bills/b1?code=C-1", "/x?a=1&b=<2>", "javascript:x", "/%4"}
	cents := []int64{0, 1, 99999999999, -7, math.MaxInt64, math.MinInt64 + 1}
	times := []time.Time{{}, day, parcela.EndOfDay(day), day.Add(25 * time.Hour), time.Date(2028, time.February, 29, 2, 59, 0, 0, time.UTC)}
	rng := rand.New(rand.NewPCG(18, 2029))
	pick := func(n int) int { return rng.IntN(n) }
	for i := range 5000 {
		rows := make([]billRow, pick(14))
		for j := range rows {
			due := times[pick(len(times))]
			rows[j] = billRow{Label: texts[pick(len(texts))], DueDate: due, EffectiveDueDate: []time.Time{due, times[pick(len(times))]}[pick(2)],
				AmountCents: cents[pick(len(cents))], StatusLabel: texts[pick(len(texts))], Class: texts[pick(len(texts))],
				CheckoutURL: urls[pick(len(urls))]}
			if pick(2) == 0 {
				paid := times[pick(len(times))]
				rows[j].PaidAt = &paid
			}
		}
		sameAsTemplate(t, ref, "rows", struct{ Bills []billRow }{rows}, string(billRows(rows)), i)
	}
}

// sameAsTemplate fails the test unless got, the Go-written part for the
// i-th generated data, is the bytes ref's template name writes for data.
func sameAsTemplate(t *testing.T, ref *template.Template, name string, data any, got string, i int) {
	t.Helper()
	var want bytes.Buffer
	if err := ref.ExecuteTemplate(&want, name, data); err != nil {
		t.Fatal(err)
	}
	if got != want.String() {
		t.Fatalf("%s %d, %+v:\n got %q\nwant %q", name, i, data, got, want.String())
	}
}
