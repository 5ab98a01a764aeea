package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"parcela"
	"parcela/jsonbody"
)

// MaxBodyBytes is the largest request body accepted (413 above it).
const MaxBodyBytes = 1 << 20

// writeJSON writes v with status. Encoding happens before the header is
// written so a marshalling failure can still become a 500.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, r, fmt.Errorf("encode response: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// readBody enforces the JSON content type and the size limit, returning the
// raw body (kept for idempotency hashing).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, parcela.Errorf(parcela.EPAYLOADTOOLARGE, "request body is larger than %d bytes", MaxBodyBytes)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, parcela.Errorf(parcela.EPAYLOADTOOLARGE, "request body is larger than %d bytes", MaxBodyBytes)
	} else if err != nil {
		return nil, parcela.Errorf(parcela.EMALFORMED, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) > 0 && !isJSON(r.Header.Get("Content-Type")) {
		return nil, parcela.Errorf(parcela.EUNSUPPORTEDMEDIA, "send the body as JSON with Content-Type: application/json")
	}
	return body, nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || mt == "application/problem+json")
}

// decode reads a JSON body into dst strictly (jsonbody): duplicate keys,
// keys in another case than the field's, invalid UTF-8 and trailing data
// are malformed. An empty body is allowed only when optional is true.
func decode(body []byte, dst any, optional bool) error {
	// An optional body sent as JSON null (what a client marshalling no
	// value sends) is none; a required one is refused (jsonbody.Decode).
	if trimmed := bytes.Trim(body, " \t\r\n"); optional && (len(trimmed) == 0 || string(trimmed) == "null") {
		return nil
	}
	return jsonbody.Decode(body, dst)
}

// patchNulls reads a PATCH's nulls on the fields of fields (a struct of
// json tags), in body's object at key (the body itself when key is ""):
// those in nullable are the fields to clear, any other is refused. Read as
// absent, a null kept the field as it was and answered 200, while the
// client meant to clear it: banner_url: null kept the banner. It is a value
// of the wrong type, as the contract types these fields, named as such.
func patchNulls(body []byte, key string, fields any, nullable ...string) (cleared map[string]bool, err error) {
	var object map[string]json.RawMessage
	if key == "" {
		if json.Unmarshal(body, &object) != nil {
			return nil, nil // decode took the body: nothing to look for here
		}
	} else {
		var outer map[string]json.RawMessage
		if json.Unmarshal(body, &outer) != nil || json.Unmarshal(outer[key], &object) != nil {
			return nil, nil
		}
		key += "."
	}
	var e *parcela.Error
	t := reflect.TypeOf(fields)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if raw, sent := object[name]; !sent || name == "-" || string(raw) != "null" {
			continue
		}
		if slices.Contains(nullable, name) {
			if cleared == nil {
				cleared = map[string]bool{}
			}
			cleared[name] = true
			continue
		}
		const msg = "must not be null: omit it to keep its value"
		if e == nil {
			e = &parcela.Error{Code: parcela.EMALFORMED, Message: key + name + " " + msg}
		}
		e.Fields = append(e.Fields, parcela.FieldError{Field: key + name, Code: "invalid_type", Message: msg})
	}
	if e != nil {
		return nil, e
	}
	return cleared, nil
}

// Page is the shape of every paged list.
type Page[T any] struct {
	Results    []T `json:"results"`
	TotalItems int `json:"total_items"`
	TotalPages int `json:"total_pages"`
}

func newPage[T any](items []T, total, perPage int) Page[T] {
	if items == nil {
		items = []T{}
	}
	return Page[T]{Results: items, TotalItems: total, TotalPages: (total + perPage - 1) / perPage}
}
