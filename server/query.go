package server

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"parcela"
)

// query is a request's query string, parsed once for all the parameters a
// handler reads.
type query url.Values

// readQuery parses r's query string, whose parameters must be among
// takes. A query the server could read otherwise than its client meant is
// malformed: one that is not key=value pairs joined by & (the parser would
// drop a pair with a stray % or a ';', a filter with it), and a parameter
// the listing does not take (a misspelt filter, "due_date_from", would
// list every bill); a parameter sent twice or empty is refused where it is
// read. A query of only "&"s has no parameter.
func readQuery(r *http.Request, takes ...string) (query, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, parcela.Errorf(parcela.EMALFORMED, "the query string must be URL-encoded name=value pairs joined by &: %v", err)
	}
	var unknown []parcela.FieldError
	for name := range q {
		if !slices.Contains(takes, name) {
			msg := "is not a parameter of this listing, which takes " + strings.Join(takes, ", ")
			if len(takes) == 0 {
				msg = "is not a parameter of this listing, which takes none"
			}
			unknown = append(unknown, parcela.FieldError{Field: name, Code: "not_allowed", Message: msg})
		}
	}
	if len(unknown) > 0 {
		slices.SortFunc(unknown, func(a, b parcela.FieldError) int { return strings.Compare(a.Field, b.Field) })
		return nil, &parcela.Error{Code: parcela.EMALFORMED, Message: "the query has a parameter this listing does not take: " + unknown[0].Field, Fields: unknown}
	}
	return query(q), nil
}

// one reads an optional parameter ("" when absent). Sent twice it is
// malformed: the first would count, and a client asking for two statuses
// would get one without knowing. Sent empty it is malformed too: a client
// whose variable was unset (billing_id=) would list every bill as if they
// were that billing's.
func (q query) one(name string) (string, error) {
	switch vs := q[name]; {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", &parcela.Error{Code: parcela.EMALFORMED, Message: name + " must be sent once",
			Fields: []parcela.FieldError{{Field: name, Code: "invalid", Message: "must be sent once"}}}
	case vs[0] == "":
		return "", &parcela.Error{Code: parcela.EMALFORMED, Message: name + " must not be empty: leave the parameter out instead",
			Fields: []parcela.FieldError{{Field: name, Code: "invalid", Message: "must not be empty; leave the parameter out instead"}}}
	default:
		return vs[0], nil
	}
}

// integer reads an optional integer parameter: one that is not an integer
// is malformed, one past 64 bits out of bounds.
func (q query) integer(name string, def int) (int, error) {
	s, err := q.one(name)
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

// date reads an optional YYYY-MM-DD São Paulo date as the day's first
// instant; end dates are inclusive, so they become the next day's.
func (q query) date(name string, end bool) (*time.Time, error) {
	s, err := q.one(name)
	if s == "" || err != nil {
		return nil, err
	}
	// Read as a calendar date: in São Paulo a day daylight saving began
	// would parse as 23:00 of the day before.
	day, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return nil, &parcela.Error{Code: parcela.EMALFORMED, Message: name + " must be a date as YYYY-MM-DD",
			Fields: []parcela.FieldError{{Field: name, Code: "invalid", Message: "must be a date as YYYY-MM-DD"}}}
	}
	if end {
		day = day.AddDate(0, 0, 1)
	}
	t := parcela.StartOfDay(day.Date())
	return &t, nil
}

// page reads page and per_page (default 1 and DefaultPerPage) without
// bounding them: each listing's use case bounds its own page (the bills'
// filter with the rest, the others by the weight of their items).
func (q query) page() (parcela.Page, error) {
	page, err := q.integer("page", 1)
	if err != nil {
		return parcela.Page{}, err
	}
	perPage, err := q.integer("per_page", parcela.DefaultPerPage)
	return parcela.Page{Page: page, PerPage: perPage}, err
}

// pageParams reads the page of a listing that reads nothing else from its
// query.
func pageParams(r *http.Request) (parcela.Page, error) {
	q, err := readQuery(r, "page", "per_page")
	if err != nil {
		return parcela.Page{}, err
	}
	return q.page()
}
