package brcode

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// asciiFold maps the accented letters of Portuguese (and the other Latin-1
// letters customers type) to their unaccented ASCII letter. BR Code text
// fields are restricted to ASCII, and readers show "?" or reject the code
// when they meet anything else.
var asciiFold = map[rune]string{
	'á': "a", 'à': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a",
	'Á': "A", 'À': "A", 'Â': "A", 'Ã': "A", 'Ä': "A", 'Å': "A",
	'é': "e", 'è': "e", 'ê': "e", 'ë': "e",
	'É': "E", 'È': "E", 'Ê': "E", 'Ë': "E",
	'í': "i", 'ì': "i", 'î': "i", 'ï': "i",
	'Í': "I", 'Ì': "I", 'Î': "I", 'Ï': "I",
	'ó': "o", 'ò': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o",
	'Ó': "O", 'Ò': "O", 'Ô': "O", 'Õ': "O", 'Ö': "O", 'Ø': "O",
	'ú': "u", 'ù': "u", 'û': "u", 'ü': "u",
	'Ú': "U", 'Ù': "U", 'Û': "U", 'Ü': "U",
	'ç': "c", 'Ç': "C", 'ñ': "n", 'Ñ': "N",
	'ý': "y", 'ÿ': "y", 'Ý': "Y",
	'ß': "ss", 'æ': "ae", 'Æ': "AE", 'œ': "oe", 'Œ': "OE",
	'ª': "a", 'º': "o", '°': "o",
	'‘': "'", '’': "'", '“': "\"", '”': "\"", '–': "-", '—': "-",
	'ł': "l", 'Ł': "L", 'đ': "d", 'Đ': "D", 'ı': "i", // letters with a stroke or without a dot decompose to nothing
}

// PixName is name as a Pix code carries it (tag 59): accents folded, other
// non-ASCII characters dropped, cut to 25 characters. Empty, no Pix can be
// issued.
func PixName(name string) string { return toASCII(name, maxPixName) }

// toASCII folds accents, turns any white space into a single space, drops
// every other non-printable or non-ASCII character, trims the result and
// cuts it to at most max characters. A letter outside the table is folded
// to the ASCII letters of its compatibility decomposition (ř, ē, ş, a
// full-width Ｃ; decomposed): dropped, "Dvořák" read "Dvoak" in the
// payer's bank.
func toASCII(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsSpace(r): // an em space between two words dropped joined them
			b.WriteByte(' ')
		case r > ' ' && r <= '~':
			b.WriteRune(r)
		default:
			if f, ok := asciiFold[r]; ok {
				b.WriteString(f)
				continue
			}
			b.WriteString(decomposed(r))
		}
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	if len(out) > max {
		out = strings.TrimRight(out[:max], " ")
	}
	return out
}

// decomposed is r's compatibility decomposition in ASCII, its accents
// (combining marks) left out and a fraction's slash written /, or nothing
// when any other part of it is not ASCII: those parts dropped, what was
// left said something else ("Escola ½ Preço" read "Escola 12 Preco" in
// the payer's bank, "㈱" "()").
func decomposed(r rune) string {
	var out []byte
	for _, d := range norm.NFKD.String(string(r)) {
		switch {
		case d > ' ' && d <= '~':
			out = append(out, byte(d))
		case d == '\u2044': // ½ is 1⁄2
			out = append(out, '/')
		case unicode.Is(unicode.Mn, d):
		default:
			return ""
		}
	}
	return string(out)
}
