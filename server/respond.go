package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"parcela"
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

// decode reads a JSON body into dst. An empty body is allowed only when
// optional is true.
func decode(body []byte, dst any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return parcela.Errorf(parcela.EMALFORMED, "a JSON request body is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return malformed(err)
	}
	if dec.More() {
		return parcela.Errorf(parcela.EMALFORMED, "the body must hold a single JSON value")
	}
	return nil
}

// malformed explains a JSON decoding error in terms of the request.
func malformed(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return parcela.Errorf(parcela.EMALFORMED, "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return &parcela.Error{Code: parcela.EMALFORMED, Message: fmt.Sprintf("%s must be %s", typ.Field, jsonKind(typ.Type.Kind().String())),
				Fields: []parcela.FieldError{{Field: typ.Field, Code: "invalid_type", Message: "must be " + jsonKind(typ.Type.Kind().String())}}}
		}
		return parcela.Errorf(parcela.EMALFORMED, "the body must be a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return parcela.Errorf(parcela.EMALFORMED, "malformed JSON: unexpected end of body")
	}
	return parcela.Errorf(parcela.EMALFORMED, "malformed JSON: %v", err)
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32":
		return "an integer"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "a " + k
}

// queryInt reads an optional positive integer query parameter.
func queryInt(r *http.Request, name string, def int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, &parcela.Error{Code: parcela.EMALFORMED, Message: name + " must be an integer",
			Fields: []parcela.FieldError{{Field: name, Code: "invalid_type", Message: "must be an integer"}}}
	}
	return n, nil
}

// Page is the shape of every paged list.
type Page[T any] struct {
	Results    []T `json:"results"`
	TotalItems int `json:"total_items"`
	TotalPages int `json:"total_pages"`
}

// pageParams reads page and per_page (default 1 and 25, per_page ≤ 1000).
func pageParams(r *http.Request) (page, perPage int, err error) {
	if page, err = queryInt(r, "page", 1); err != nil {
		return
	}
	if perPage, err = queryInt(r, "per_page", 25); err != nil {
		return
	}
	var v parcela.Validation
	if page < 1 {
		v.Add("page", "too_small", "must be at least 1")
	}
	if perPage < 1 {
		v.Add("per_page", "too_small", "must be at least 1")
	} else if perPage > 1000 {
		v.Add("per_page", "too_large", "must be at most 1000")
	}
	return page, perPage, v.Err()
}

func newPage[T any](items []T, total, perPage int) Page[T] {
	if items == nil {
		items = []T{}
	}
	return Page[T]{Results: items, TotalItems: total, TotalPages: (total + perPage - 1) / perPage}
}
