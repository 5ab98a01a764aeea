package web

import (
	"strconv"
	"strings"
)

// markup builds a page's part in Go rather than in a template, for the
// parts the profile finds hot: html/template calls an escaper through
// reflection for every action that prints, and a function through
// reflection for every call, which was most of a payment box's cost.
//
// Its values are escaped exactly as html/template escapes them in text,
// in an RCDATA element (textarea) and in a quoted attribute, and its URLs
// are filtered and normalized as html/template does in a src or href, so
// the part reads the same either way; a test renders both and compares
// them byte for byte. Literal markup goes in as written: only literals
// from this package's code, never a value (TestMarkupRawTakesOnlyLiterals
// holds raw's and textIn's markup to string literals).
type markup struct{ b []byte }

// raw appends literal markup.
func (m *markup) raw(s string) { m.b = append(m.b, s...) }

// text appends s escaped for text, an RCDATA element or a quoted
// attribute value.
func (m *markup) text(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case 0:
			rep = "\uFFFD"
		case '"':
			rep = "&#34;"
		case '&':
			rep = "&amp;"
		case '\'':
			rep = "&#39;"
		case '+':
			rep = "&#43;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		default:
			continue
		}
		m.b = append(append(m.b, s[last:i]...), rep...)
		last = i + 1
	}
	m.b = append(m.b, s[last:]...)
}

// int appends n, which needs no escaping.
func (m *markup) int(n int) { m.b = strconv.AppendInt(m.b, int64(n), 10) }

// url appends u as a quoted src or href attribute's value: an address of
// another scheme than http, https or mailto is replaced by html/template's
// "#ZgotmplZ", and bytes an address may not hold are percent-encoded, as
// its normalizer does (lower-case hex; a '%' kept before two hex digits).
func (m *markup) url(u string) {
	if scheme, _, ok := strings.Cut(u, ":"); ok && !strings.Contains(scheme, "/") &&
		!strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") && !strings.EqualFold(scheme, "mailto") {
		m.raw("#ZgotmplZ")
		return
	}
	var norm []byte
	last := 0
	for i := 0; i < len(u); i++ {
		if urlKept(u, i) {
			continue
		}
		norm = append(append(norm, u[last:i]...), '%', lowerHex[u[i]>>4], lowerHex[u[i]&15])
		last = i + 1
	}
	if norm == nil {
		m.text(u)
		return
	}
	m.text(string(append(norm, u[last:]...)))
}

const lowerHex = "0123456789abcdef"

// urlKept tells whether html/template's normalizer leaves u[i] in an
// address: the unreserved and reserved characters, and a '%' that starts
// an escape (its test is i+2 < len, as there).
func urlKept(u string, i int) bool {
	switch c := u[i]; {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '%':
		return i+2 < len(u) && isHexDigit(u[i+1]) && isHexDigit(u[i+2])
	default:
		return strings.IndexByte("!#$&*+,/:;=?@[]-._~", c) >= 0
	}
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// textIn appends s escaped between two pieces of literal markup: the
// commonest step of a part, an element's or an attribute's value.
func (m *markup) textIn(before, s, after string) {
	m.raw(before)
	m.text(s)
	m.raw(after)
}
