// Package jsonbody decodes API request bodies strictly. encoding/json, left
// alone, takes the last of two duplicate keys, matches "Email" to a field
// tagged "email", and turns invalid UTF-8 into U+FFFD: a body that two
// readers (a proxy, a signature check, parcela) would understand
// differently. Decode refuses each of those as a malformed request, and
// otherwise decodes exactly as encoding/json does (numbers as json.Number
// in untyped values, unknown fields ignored).
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"parcela"
)

// Decode reads one JSON value from body into v. Every failure is a
// *parcela.Error: malformed_request (400) for a body that is not one valid,
// unambiguous JSON value of the right types, and validation_failed (422) for
// an integer too large for its field or a string that is no timestamp.
func Decode(body []byte, v any) error {
	if len(bytes.Trim(body, jsonSpace)) == 0 {
		return parcela.Errorf(parcela.EMALFORMED, "a JSON request body is required")
	}
	if string(bytes.Trim(body, jsonSpace)) == "null" {
		// encoding/json leaves v as it was: read as {}, a null body
		// canceled an order with the default reason.
		return parcela.Errorf(parcela.EMALFORMED, "the body must be a JSON object, not null")
	}
	if bytes.HasPrefix(body, []byte("\ufeff")) {
		// JSON text has none (RFC 8259); encoding/json would name its
		// first byte as the character 'ï', which the client cannot see.
		return parcela.Errorf(parcela.EMALFORMED, "the body starts with a byte order mark (U+FEFF): send the JSON without it")
	}
	if !utf8.Valid(body) {
		return parcela.Errorf(parcela.EMALFORMED, "the body is not valid UTF-8 (byte %d)", invalidUTF8At(body))
	}
	if at, ok := loneSurrogate(body); ok {
		return parcela.Errorf(parcela.EMALFORMED, "malformed JSON at byte %d: a \\u escape of half a UTF-16 surrogate pair is not a character", at)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		if ownRefusal(err) {
			if e := refusedValue(body, v); e != nil {
				return e
			}
		} else if e := mistypedValue(err, body, v); e != nil {
			return e
		}
		return malformed(err)
	}
	if rest := bytes.TrimLeft(body[dec.InputOffset():], jsonSpace); len(rest) > 0 {
		return parcela.Errorf(parcela.EMALFORMED, "the body must hold a single JSON value; more follows at byte %d", len(body)-len(rest))
	}
	return checkKeys(body, v)
}

// jsonSpace is white space as JSON defines it (RFC 8259): no form feed, no
// Unicode spaces.
const jsonSpace = " \t\r\n"

// invalidUTF8At is the offset of the first byte that is not valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// loneSurrogate finds a \u escape in a string that encodes half of a
// surrogate pair without its other half (encoding/json would decode it as
// U+FFFD), and returns its offset.
func loneSurrogate(b []byte) (int, bool) {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(b):
			if b[i+1] != 'u' {
				i++ // the escaped character, a quote included
				continue
			}
			r, ok := hex4(b, i+2)
			switch {
			case !ok:
				return 0, false // a syntax error: the decoder reports it
			case r >= 0xDC00 && r <= 0xDFFF:
				return i, true
			case r >= 0xD800 && r <= 0xDBFF:
				if low, ok := hex4(b, i+8); i+7 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' || !ok || low < 0xDC00 || low > 0xDFFF {
					return i, true
				}
				i += 11 // both escapes
				continue
			}
			i += 5
		}
	}
	return 0, false
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// malformed explains a JSON decoding error in terms of the request.
func malformed(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return parcela.Errorf(parcela.EMALFORMED, "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return parcela.Errorf(parcela.EMALFORMED, "the body must be a JSON object")
		}
		return typeRefusal(typ.Field, typ.Type.Kind(), strings.TrimPrefix(typ.Value, "number "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return parcela.Errorf(parcela.EMALFORMED, "malformed JSON: unexpected end of body")
	}
	var e *parcela.Error
	if errors.As(err, &e) {
		return e
	}
	return parcela.Errorf(parcela.EMALFORMED, "malformed JSON: %v", err)
}

// typeRefusal is the error for a value of the wrong JSON type at field,
// whose Go type is of kind: number is the value as written when it is a
// number. An integer out of range is 422 (too_large or too_small), as
// validation would say of any value past a limit; anything else is 400
// invalid_type.
func typeRefusal(field string, kind reflect.Kind, number string) error {
	if isInteger(kind.String()) && integerLiteral(number) {
		code, msg := "too_large", "must be an integer that fits in 64 bits"
		if strings.HasPrefix(number, "-") {
			code = "too_small"
		}
		return &parcela.Error{Code: parcela.EINVALID, Message: field + " " + msg,
			Fields: []parcela.FieldError{{Field: field, Code: code, Message: msg}}}
	}
	msg := "must be " + jsonKind(kind.String())
	return &parcela.Error{Code: parcela.EMALFORMED, Message: fmt.Sprintf("%s %s", field, msg),
		Fields: []parcela.FieldError{{Field: field, Code: "invalid_type", Message: msg}}}
}

// ownRefusal tells an error a type decoding itself returned (a rate, a
// timestamp) from encoding/json's own, which name where they happened.
func ownRefusal(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return !errors.As(err, &syn) && !errors.As(err, &typ) && !errors.Is(err, io.ErrUnexpectedEOF)
}

func isInteger(kind string) bool {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return true
	}
	return false
}

// integerLiteral reports whether s is a JSON integer: -?[0-9]+, so a value
// encoding/json failed to store only because it is out of range.
func integerLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func jsonKind(k string) string {
	switch {
	case isInteger(k):
		return "an integer"
	}
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	case "float32", "float64":
		return "a number"
	}
	return "a " + k
}
