package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
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
	if optional && len(bytes.Trim(body, " \t\r\n")) == 0 {
		return nil
	}
	return jsonbody.Decode(body, dst)
}

// queryParam reads an optional query parameter ("" when absent). A query
// the server could read otherwise than its client meant is malformed: one
// that is not key=value pairs joined by & (the parser would drop a pair
// with a stray % or a ';', a filter with it), or the parameter sent twice
// (the first would count, and a client asking for two statuses would get
// one without knowing).
func queryParam(r *http.Request, name string) (string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", parcela.Errorf(parcela.EMALFORMED, "the query string must be URL-encoded name=value pairs joined by &: %v", err)
	}
	switch vs := q[name]; len(vs) {
	case 0:
		return "", nil
	case 1:
		return vs[0], nil
	}
	return "", &parcela.Error{Code: parcela.EMALFORMED, Message: name + " must be sent once",
		Fields: []parcela.FieldError{{Field: name, Code: "invalid", Message: "must be sent once"}}}
}

// queryInt reads an optional integer query parameter: one that is not an
// integer is malformed, one past 64 bits out of bounds.
func queryInt(r *http.Request, name string, def int) (int, error) {
	s, err := queryParam(r, name)
	if err != nil {
		return 0, err
	}
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) {
		code := "too_large"
		if strings.HasPrefix(s, "-") {
			code = "too_small"
		}
		return 0, fieldErr(name, code, "is out of bounds")
	} else if err != nil {
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

// readPage reads page and per_page (default 1 and DefaultPerPage) without
// bounding them: the bills' filter validates its page with the rest.
func readPage(r *http.Request) (parcela.Page, error) {
	page, err := queryInt(r, "page", 1)
	if err != nil {
		return parcela.Page{}, err
	}
	perPage, err := queryInt(r, "per_page", parcela.DefaultPerPage)
	return parcela.Page{Page: page, PerPage: perPage}, err
}

// pageParams reads a listing's page within Page.Validate's bounds.
func pageParams(r *http.Request) (parcela.Page, error) {
	p, err := readPage(r)
	if err != nil {
		return p, err
	}
	return p, p.Validate()
}

func newPage[T any](items []T, total, perPage int) Page[T] {
	if items == nil {
		items = []T{}
	}
	return Page[T]{Results: items, TotalItems: total, TotalPages: (total + perPage - 1) / perPage}
}
