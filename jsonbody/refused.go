package jsonbody

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"time"

	"parcela"
)

// timestampExample shows the form a timestamp takes in a request.
const timestampExample = "2026-12-20T23:59:59.999-03:00"

// Timestamp decodes a JSON timestamp: a string in RFC 3339 with its UTC
// offset. Its errors name no field; Decode adds the one it was sent in.
func Timestamp(raw []byte) (time.Time, error) {
	var t time.Time
	if len(raw) == 0 || raw[0] != '"' {
		msg := "must be a string: a timestamp such as " + timestampExample
		return t, &parcela.Error{Code: parcela.EMALFORMED, Message: msg, Fields: []parcela.FieldError{{Code: "invalid_type", Message: msg}}}
	}
	// encoding/json takes a comma before the fraction (ISO 8601 does);
	// RFC 3339, and so the contract, has only the point.
	if err := t.UnmarshalJSON(raw); err != nil || len(raw) > 20 && raw[20] == ',' {
		msg := "must be a timestamp with its UTC offset (RFC 3339), such as " + timestampExample
		return t, &parcela.Error{Code: parcela.EINVALID, Message: msg, Fields: []parcela.FieldError{{Code: "invalid", Message: msg}}}
	}
	return t, nil
}

var timeType = reflect.TypeFor[time.Time]()

// refusedValue finds the value of body that a type decoding itself (a
// rate, a timestamp) refused, and returns the refusal naming its field:
// encoding/json reports such an error without the field it came from. It
// returns nil when it finds none.
func refusedValue(body []byte, v any) error {
	return fieldRefusal(walker{refused: refusal}.walk(body, reflect.TypeOf(v)))
}

// fieldRefusal is err, a walk's error, when it names a field; nil
// otherwise (Decode then reports encoding/json's own error).
func fieldRefusal(err error) error {
	var e *parcela.Error
	if errors.As(err, &e) && len(e.Fields) > 0 && e.Fields[0].Field != "" {
		return e
	}
	return nil
}

// refusal is the error a value of type t gives raw, naming path, or nil.
func refusal(t reflect.Type, raw []byte, at *fieldPath) error {
	var err error
	if t == timeType {
		if string(raw) != "null" {
			_, err = Timestamp(raw)
		}
	} else {
		err = reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw)
	}
	if err == nil {
		return nil
	}
	var e *parcela.Error
	if !errors.As(err, &e) {
		e = &parcela.Error{Code: parcela.EMALFORMED, Message: err.Error(), Fields: []parcela.FieldError{{Code: "invalid_type", Message: err.Error()}}}
	}
	path := at.String()
	out := &parcela.Error{Code: e.Code, Message: path + " " + e.Message}
	for _, f := range e.Fields {
		f.Field = path
		out.Fields = append(out.Fields, f)
	}
	return out
}

// mistypedValue finds the value of body that encoding/json refused for
// its type (err, a *json.UnmarshalTypeError), and returns the refusal
// naming its field as every other field error does, array indexes
// included ("payment_configurations[1].max_installments", where
// encoding/json says "payment_configurations.max_installments"). It
// returns nil when err is no such error or the value is not found.
func mistypedValue(err error, body []byte, v any) error {
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) || typ.Field == "" {
		return nil
	}
	return fieldRefusal(walker{mistyped: mistyped}.walk(body, reflect.TypeOf(v)))
}

// mistyped is the refusal of tok, a value's first token, as a value of
// type t (nil: any value goes) at path, or nil when encoding/json takes
// it. The body before it decoded, so only its JSON type can be wrong.
func mistyped(t reflect.Type, tok json.Token, at *fieldPath) error {
	if t == nil || tok == nil || at.isEmpty() {
		return nil // any value, null, or the body itself (Decode says so)
	}
	k := t.Kind()
	switch tok := tok.(type) {
	case json.Delim:
		switch {
		case tok == '{' && (k == reflect.Struct || k == reflect.Map):
			return nil
		case tok == '[' && (k == reflect.Slice || k == reflect.Array):
			return nil
		}
	case string:
		if k == reflect.String || k == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
	case bool:
		if k == reflect.Bool {
			return nil
		}
	case json.Number:
		if fitsNumber(t, tok) {
			return nil
		}
		return typeRefusal(at.String(), k, tok.String())
	}
	return typeRefusal(at.String(), k, "")
}

// fitsNumber reports whether encoding/json stores n in a value of type t.
func fitsNumber(t reflect.Type, n json.Number) bool {
	s := n.String()
	var err error
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(s, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err = strconv.ParseUint(s, 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(s, t.Bits())
	default:
		return false
	}
	return err == nil
}
