package sqldb

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Packed rows. SQLite's driver (modernc) reads a row a column at a time,
// and each column costs calls into the library behind the connection's
// lock: its name and declared type once per statement, its type and value
// once per row. A bill's row has 62 columns, an offer page's over a
// hundred, and those calls were a fifth of a bill's read
// (docs/performance.md, nineteenth pass). A select list written
// pack(columns) is one column on SQLite, the JSON array json_array makes
// of them, and the columns themselves on PostgreSQL, whose driver decodes
// a row at once. The rows' Scan decodes the array into the destinations
// the columns would have filled, with the values the driver would have
// given (int64, string, nil), so the scanning code is the same on both.
// A blob cannot be packed (json_array refuses it) and a real number is
// refused by the decoding: the store writes neither.

// packOpen marks a packed select list in portable SQL.
const packOpen = "PACK("

// pack marks columns (a select list) as packed.
func pack(columns string) string { return packOpen + columns + ")" }

// unpack rewrites every pack(…) of q: as json_array(…) on SQLite, as its
// columns on PostgreSQL. It reports whether q had one.
func unpack(q string, sqlite bool) (string, bool) {
	if !strings.Contains(q, packOpen) {
		return q, false
	}
	var out strings.Builder
	out.Grow(len(q) + 16)
	for {
		i := strings.Index(q, packOpen)
		if i < 0 {
			out.WriteString(q)
			return out.String(), true
		}
		out.WriteString(q[:i])
		q = q[i+len(packOpen):]
		end := closing(q)
		if end < 0 {
			panic("sqldb: a pack( without its closing parenthesis in " + q)
		}
		if sqlite {
			out.WriteString("json_array(" + q[:end] + ")")
		} else {
			out.WriteString(q[:end])
		}
		q = q[end+1:]
	}
}

// closing is the index in s of the parenthesis that closes one opened
// just before s, skipping quoted literals.
func closing(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return -1
			}
			i += j + 1
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// decodePacked reads the JSON array SQLite's json_array made of a row into
// row, which must have one place per element: integers as int64, text as
// string, NULL as nil. A real number is refused (the store writes none,
// and json_array prints one with 15 digits, not exactly).
func decodePacked(s string, row []any) error {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return errors.New("sqldb: a packed row is not a JSON array")
	}
	s = s[1 : len(s)-1]
	n := 0
	for len(s) > 0 {
		if n == len(row) {
			return fmt.Errorf("sqldb: a packed row has more than %d columns", len(row))
		}
		var err error
		switch c := s[0]; {
		case c == '"':
			row[n], s, err = packedString(s[1:])
		case c == 'n' && strings.HasPrefix(s, "null"):
			row[n], s = nil, s[len("null"):]
		case c == '-' || c >= '0' && c <= '9':
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			row[n], err = strconv.ParseInt(s[:end], 10, 64)
			if err != nil {
				err = fmt.Errorf("sqldb: column %d of a packed row is not an integer: %w", n, err)
			}
			s = s[end:]
		default:
			err = fmt.Errorf("sqldb: column %d of a packed row starts with %q", n, c)
		}
		if err != nil {
			return err
		}
		n++
		if len(s) > 0 {
			if s[0] != ',' || len(s) == 1 {
				return fmt.Errorf("sqldb: column %d of a packed row is followed by %q", n-1, s[0])
			}
			s = s[1:]
		}
	}
	if n != len(row) {
		return fmt.Errorf("sqldb: a packed row has %d columns, not %d", n, len(row))
	}
	return nil
}

// packedString reads a JSON string whose opening quote is gone, and
// returns it and what follows its closing quote. Bytes other than escapes
// are kept as they are.
func packedString(s string) (string, string, error) {
	end := strings.IndexAny(s, `"\`)
	if end >= 0 && s[end] == '"' {
		return s[:end], s[end+1:], nil // no escapes: a piece of s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			return string(b), s[i+1:], nil
		}
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if i+1 == len(s) {
			break
		}
		i++
		switch s[i] {
		case '"', '\\', '/':
			b = append(b, s[i])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, rest, ok := packedRune(s[i+1:])
			if !ok {
				return "", "", errors.New(`sqldb: a packed row has a malformed \u escape`)
			}
			b = utf8.AppendRune(b, r)
			i = len(s) - len(rest) - 1
		default:
			return "", "", fmt.Errorf(`sqldb: a packed row has the unknown escape \%c`, s[i])
		}
	}
	return "", "", errors.New("sqldb: a packed row has an unterminated string")
}

// packedRune reads the four hex digits after \u (and a low surrogate's
// escape after a high one) and returns the rune and what follows.
func packedRune(s string) (rune, string, bool) {
	if len(s) < 4 {
		return 0, s, false
	}
	v, err := strconv.ParseUint(s[:4], 16, 16)
	if err != nil {
		return 0, s, false
	}
	r, s := rune(v), s[4:]
	if utf16.IsSurrogate(r) && len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
		if lo, err := strconv.ParseUint(s[2:6], 16, 16); err == nil {
			if pair := utf16.DecodeRune(r, rune(lo)); pair != utf8.RuneError {
				return pair, s[6:], true
			}
		}
	}
	return r, s, true
}
