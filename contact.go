package parcela

import (
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"
)

// areaCodes are Brazil's 67 telephone area codes (DDD), by ANATEL's
// numbering plan.
var areaCodes = map[string]bool{}

func init() {
	for _, ddd := range strings.Fields(`
		11 12 13 14 15 16 17 18 19  21 22 24 27 28  31 32 33 34 35 37 38
		41 42 43 44 45 46 47 48 49  51 53 54 55  61 62 63 64 65 66 67 68 69
		71 73 74 75 77 79  81 82 83 84 85 86 87 88 89
		91 92 93 94 95 96 97 98 99`) {
		areaCodes[ddd] = true
	}
}

// ParsePhone reads a Brazilian phone number as people type it (+55 or 55
// for the country, a 0 before the area code, spaces, dashes, parentheses)
// and returns its digits without the country code: the area code and 8
// digits for a landline, which starts with 2 to 5, or the area code and 9
// digits for a mobile, which starts with 9. On failure it returns a
// message for the API user.
func ParsePhone(s string) (string, string) {
	const usage = "must be a Brazilian phone with its area code: 10 digits for a landline, 11 for a mobile starting with 9"
	s = strings.TrimSpace(s)
	international := strings.HasPrefix(s, "+")
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '(' || r == ')' || (r == '+' && i == 0):
		default:
			return "", usage
		}
	}
	d := b.String()
	switch {
	case international && !strings.HasPrefix(d, "55"):
		return "", "must be a Brazilian phone (+55)"
	case international || (len(d) == 12 || len(d) == 13) && strings.HasPrefix(d, "55"):
		d = d[2:]
	}
	if (len(d) == 11 || len(d) == 12) && d[0] == '0' { // the trunk prefix
		d = d[1:]
	}
	switch {
	case len(d) != 10 && len(d) != 11:
		return "", usage
	case !areaCodes[d[:2]]:
		return "", "has no Brazilian area code (DDD) " + d[:2]
	case len(d) == 11 && d[2] != '9':
		return "", "must have 9 after the area code: an 11-digit number is a mobile"
	case len(d) == 10 && (d[2] < '2' || d[2] > '5'):
		return "", "must start with 2 to 5 after the area code for a landline, or be a mobile of 11 digits starting with 9"
	}
	return d, ""
}

// validEmail reports whether e is a bare address (no display name) whose
// mailbox name is at most 64 bytes (RFC 5321: no server need deliver to a
// longer one) and whose domain is a host name: labels of letters, digits
// and inner hyphens (so no "_"), and a top-level domain of at least two
// letters.
func validEmail(e string) bool {
	if len(e) > 254 || !ValidText(e, SingleLine) {
		return false
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e {
		return false
	}
	at := strings.LastIndex(e, "@")
	if at > 64 {
		return false
	}
	labels := strings.Split(e[at+1:], ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	if utf8.RuneCountInString(tld) < 2 {
		return false
	}
	for _, r := range tld {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}
