package parcela

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// TrimText is s without the white space and the invisible format
// characters (Unicode's Cf: zero-width space and joiners, word joiner,
// byte-order mark, soft hyphen, direction marks) at its ends. A name made
// only of them is as empty as one of spaces, and would be stored and
// shown as a blank; at the ends they only make two equal names differ.
// Inside text they stay: an emoji sequence joins with U+200D. The
// joiners and the tag characters are not trimmed at the ends either (a
// flag of Scotland ends in tags, an old-style Malayalam chillu in a
// joiner), only when nothing else is left; nor the direction overrides,
// so that ValidText refuses them wherever they are. The letters that
// show nothing alone (blankLetter) count as nothing too when nothing but
// them, white space and format characters is left.
func TrimText(s string) string {
	s = strings.TrimFunc(s, trimmedAtEnds)
	if strings.IndexFunc(s, func(r rune) bool { return !trimmedAtEnds(r) && !joinerOrTag(r) && !blankLetter(r) }) < 0 {
		return "" // joiners, tags and blank letters alone: nothing to see
	}
	return s
}

// trimmedAtEnds tells the characters TrimText takes off text's ends.
func trimmedAtEnds(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) && !DirectionControl(r) && !joinerOrTag(r)
}

// blankLetter tells the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0)
// and the blank Braille cell (U+2800): letters and symbols to Unicode, not
// white space nor format characters, that show nothing alone, so a name
// of them alone passed as filled in and was shown as a blank. They are
// not trimmed off a name's ends: a filler before a vowel is how old
// Hangul writes a syllable. The other marks Unicode tells renderers to
// draw as nothing (Other_Default_Ignorable_Code_Point: the combining
// grapheme joiner U+034F, the Khmer inherent vowels U+17B4 and U+17B5;
// and the variation selectors, U+FE0F among them) are blank alone too,
// and keep their place beside what they change (an emoji's U+FE0F).
func blankLetter(r rune) bool {
	return r == '\u2800' || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)
}

// joinerOrTag tells the zero-width joiner and non-joiner and the tag
// characters (U+E0000 to U+E007F), the format characters that belong to
// what they follow or precede.
func joinerOrTag(r rune) bool { return r == '\u200c' || r == '\u200d' || r >= 0xE0000 && r <= 0xE007F }

// TextKind says which control characters a string field may hold.
type TextKind int

const (
	// SingleLine text (names, codes, addresses, user agents) holds no
	// control character at all, nor Unicode's line and paragraph
	// separators (U+2028, U+2029), which break it as a line feed does.
	SingleLine TextKind = iota
	// FreeText (descriptions) may also break lines and indent: tab, line
	// feed and the carriage return of a CRLF.
	FreeText
)

// ValidText reports whether s is valid UTF-8 without NUL or any other
// control character (C0, DEL, C1) beyond what kind allows, nor a
// direction override (DirectionControl); single-line text holds no line
// or paragraph separator either. PostgreSQL refuses NUL in text,
// and control characters have no place in what a payer or a bank reads
// back.
func ValidText(s string, kind TextKind) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if DirectionControl(r) {
			return false
		}
		if kind == SingleLine && LineSeparator(r) {
			return false
		}
		if !unicode.IsControl(r) {
			continue
		}
		if kind == FreeText && (r == '\t' || r == '\n' || r == '\r') {
			continue
		}
		return false
	}
	return true
}

// LineSeparator tells Unicode's line and paragraph separators (U+2028,
// U+2029), which single-line text refuses: they break a name's line on a
// page or a receipt as a line feed does.
func LineSeparator(r rune) bool { return r == '\u2028' || r == '\u2029' }

// DirectionControl tells the explicit direction embeddings, overrides and
// isolates (U+202A to U+202E, U+2066 to U+2069). In an offer's or a
// payer's name they reorder what follows them, so a page or a receipt
// shows text the name does not hold ("Trojan Source"); the marks that
// right-to-left text needs (U+200E, U+200F) are not among them.
func DirectionControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// CutText is s up to its first n characters, never a piece of one: the
// API's lengths count characters (TooLong), and a cut in a character's
// bytes would leave text that is not UTF-8.
func CutText(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// checkText adds a field error when s holds a character kind does not allow.
func checkText(v *Validation, field, s string, kind TextKind) bool {
	if ValidText(s, kind) {
		return true
	}
	if kind == FreeText {
		v.Add(field, "invalid", "must not contain control characters other than tab and line breaks, nor direction overrides")
	} else {
		v.Add(field, "invalid", "must not contain control characters such as NUL, tab or line breaks, nor direction overrides")
	}
	return false
}

// IsUUID reports whether s is a UUID in its canonical 36-character form
// (8-4-4-4-12 hexadecimal digits, either case). Every id parcela issues
// has this form, so anything else names nothing and is answered 404
// without a query.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// LowerUUID is s in lower case when it is a UUID (IsUUID), else s as it
// is. parcela issues and stores its ids in lower case, and a UUID's hex
// digits are case-insensitive on input (RFC 9562): an id written in upper
// case names the same thing, where it found nothing.
func LowerUUID(s string) string {
	if !IsUUID(s) {
		return s
	}
	return strings.ToLower(s)
}
