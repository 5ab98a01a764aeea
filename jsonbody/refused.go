package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
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
	if err := t.UnmarshalJSON(raw); err != nil {
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
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	w := walker{dec: dec, refused: refusal}
	if err := w.value(reflect.TypeOf(v), ""); err != nil {
		var e *parcela.Error
		if errors.As(err, &e) && len(e.Fields) > 0 {
			return e
		}
	}
	return nil
}

// refusal is the error a value of type t gives raw, naming path, or nil.
func refusal(t reflect.Type, raw []byte, path string) error {
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
	out := &parcela.Error{Code: e.Code, Message: path + " " + e.Message}
	for _, f := range e.Fields {
		f.Field = path
		out.Fields = append(out.Fields, f)
	}
	return out
}
