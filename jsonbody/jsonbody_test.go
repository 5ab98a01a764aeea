package jsonbody

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"parcela"
)

const offerBody = `{"offer": {"name": "Turma", "product_id": "6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10", "amount_cents": 120000},
 "payment_configurations": [{"payment_type": "financed", "interest_rate": 0.0299, "down_payment_value": 0.2}]}`

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		code  string // "" when it decodes
		field string // the field named, if any
	}{
		{"an offer", offerBody, "", ""},
		{"unknown fields are ignored", `{"offer": {"name": "Turma", "color": "blue", "extra": {"a": 1, "A": 2}}}`, "", ""},
		{"trailing white space", offerBody + " \n\t", "", ""},
		{"null is no object", `null`, parcela.EMALFORMED, ""}, // it decoded as {}: a cancel with the default reason
		{"null among white space", " null\n", parcela.EMALFORMED, ""},
		{"a rate far out of range decodes, for validation to refuse", `{"payment_configurations": [{"interest_rate": 1e10000}]}`, "", ""},
		{"a surrogate pair", `{"offer": {"name": "Turma \ud83d\ude00"}}`, "", ""},
		{"an escaped backslash before u", `{"offer": {"name": "C:\\ud800"}}`, "", ""},
		{"an escaped NUL decodes, for validation to refuse", `{"offer": {"name": "a\u0000b"}}`, "", ""},
		{"empty", ``, parcela.EMALFORMED, ""},
		{"a byte order mark", "\ufeff" + offerBody, parcela.EMALFORMED, ""},
		{"white space", " \n ", parcela.EMALFORMED, ""},
		{"duplicate key", `{"offer": {"name": "A", "name": "B"}}`, parcela.EMALFORMED, "offer.name"},
		{"duplicate top-level key", `{"offer": {}, "offer": {}}`, parcela.EMALFORMED, "offer"},
		{"duplicate key in an array item", `{"payment_configurations": [{}, {"payment_type": "upfront", "payment_type": "financed"}]}`,
			parcela.EMALFORMED, "payment_configurations[1].payment_type"},
		{"duplicate unknown key", `{"offer": {"color": 1, "color": 2}}`, parcela.EMALFORMED, "offer.color"},
		{"a key in other case", `{"offer": {"Name": "Turma"}}`, parcela.EMALFORMED, "offer.Name"},
		{"a top-level key in other case", `{"OFFER": {"name": "Turma"}}`, parcela.EMALFORMED, "OFFER"},
		{"a key in other case beside the right one", `{"offer": {"name": "A", "NAME": "B"}}`, parcela.EMALFORMED, "offer.NAME"},
		{"invalid UTF-8", "{\"offer\": {\"name\": \"Turma \xff\"}}", parcela.EMALFORMED, ""},
		{"an overlong encoding", "{\"offer\": {\"name\": \"\xc0\xaf\"}}", parcela.EMALFORMED, ""},
		{"a lone high surrogate", `{"offer": {"name": "\ud800"}}`, parcela.EMALFORMED, ""},
		{"a lone low surrogate", `{"offer": {"name": "\udc00x"}}`, parcela.EMALFORMED, ""},
		{"a high surrogate before another high", `{"offer": {"name": "\ud800\ud800"}}`, parcela.EMALFORMED, ""},
		{"a surrogate in a key", `{"offer": {"\ud800": 1}}`, parcela.EMALFORMED, ""},
		{"two values", `{} {}`, parcela.EMALFORMED, ""},
		{"a stray bracket", `{}]`, parcela.EMALFORMED, ""},
		{"a stray comma", `{},`, parcela.EMALFORMED, ""},
		{"syntax", `{"offer": }`, parcela.EMALFORMED, ""},
		{"cut short", `{"offer": {"name": "Tu`, parcela.EMALFORMED, ""},
		{"an array", `[]`, parcela.EMALFORMED, ""},
		{"a string for an integer", `{"offer": {"amount_cents": "120000"}}`, parcela.EMALFORMED, "offer.amount_cents"},
		{"a fraction for an integer", `{"offer": {"amount_cents": 1.5}}`, parcela.EMALFORMED, "offer.amount_cents"},
		{"an integer past int64", `{"offer": {"amount_cents": 9223372036854775808}}`, parcela.EINVALID, "offer.amount_cents"},
		{"an integer far past int64", `{"offer": {"amount_cents": -99999999999999999999999999}}`, parcela.EINVALID, "offer.amount_cents"},
		{"an int past int64", `{"payment_configurations": [{"max_installments": 99999999999999999999}]}`, parcela.EINVALID, "payment_configurations[0].max_installments"},
		{"a string for an int in the second item", `{"payment_configurations": [{"max_installments": 3}, {"max_installments": "12"}]}`,
			parcela.EMALFORMED, "payment_configurations[1].max_installments"},
		{"an object for an int in the second item", `{"payment_configurations": [{}, {"max_installments": {"n": 12}}]}`,
			parcela.EMALFORMED, "payment_configurations[1].max_installments"},
		{"a number for a string in an array of strings", `{"payment_configurations": [{"payment_methods": ["pix", 7]}]}`,
			parcela.EMALFORMED, "payment_configurations[0].payment_methods[1]"},
		{"a string for an array", `{"payment_configurations": [{}, {}, {"payment_methods": "pix"}]}`,
			parcela.EMALFORMED, "payment_configurations[2].payment_methods"},
		{"an array for an object", `{"offer": [1]}`, parcela.EMALFORMED, "offer"},
		{"an object for the array of items", `{"payment_configurations": {"payment_type": "upfront"}}`, parcela.EMALFORMED, "payment_configurations"},
		{"a string for a rate", `{"payment_configurations": [{"interest_rate": "0.02"}]}`, parcela.EMALFORMED, "payment_configurations[0].interest_rate"},
		{"a boolean for a rate after a null one", `{"payment_configurations": [{"interest_rate": null}, {"interest_rate": 0.01, "down_payment_value": true}]}`,
			parcela.EMALFORMED, "payment_configurations[1].down_payment_value"},
		{"a timestamp", `{"offer": {"expires_at": "2030-01-01T00:00:00.000-03:00"}}`, "", ""},
		{"a null timestamp", `{"offer": {"expires_at": null}}`, "", ""},
		{"a date for a timestamp", `{"offer": {"expires_at": "2030-01-01"}}`, parcela.EINVALID, "offer.expires_at"},
		{"a timestamp without an offset", `{"offer": {"expires_at": "2030-01-01T00:00:00"}}`, parcela.EINVALID, "offer.expires_at"},
		{"an impossible timestamp", `{"offer": {"expires_at": "2030-02-30T00:00:00Z"}}`, parcela.EINVALID, "offer.expires_at"},
		{"a number for a timestamp", `{"offer": {"expires_at": 1893456000}}`, parcela.EMALFORMED, "offer.expires_at"},
		// encoding/json takes a comma before the fraction; RFC 3339 does not.
		{"a comma before a timestamp's fraction", `{"offer": {"expires_at": "2030-01-01T00:00:00,5-03:00"}}`, parcela.EINVALID, "offer.expires_at"},
		{"a timestamp's fraction after a point", `{"offer": {"expires_at": "2030-01-01T00:00:00.5-03:00"}}`, "", ""},
		{"null for a rate", `{"payment_configurations": [{"down_payment_value": null}]}`, "", ""},
		{"an object for a rate", `{"payment_configurations": [{"registration_fee": {"value": 0.02}}]}`, parcela.EMALFORMED, "payment_configurations[0].registration_fee"},
	}
	for _, tt := range tests {
		var req parcela.OfferRequest
		err := Decode([]byte(tt.body), &req)
		if tt.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		e, ok := err.(*parcela.Error)
		if !ok || e.Code != tt.code {
			t.Errorf("%s: err = %v, want %s", tt.name, err, tt.code)
			continue
		}
		if tt.field != "" && (len(e.Fields) == 0 || e.Fields[0].Field != tt.field) {
			t.Errorf("%s: fields %+v, want %s", tt.name, e.Fields, tt.field)
		}
	}
	// A byte order mark, which some editors and shells write before a
	// file's text, is said to be one: "invalid character 'ï'" named a
	// character the client cannot see in what it sent.
	if err := Decode([]byte("\ufeff"+offerBody), new(parcela.OfferRequest)); err == nil || !strings.Contains(err.Error(), "byte order mark") {
		t.Errorf("a body after a byte order mark: %v", err)
	}
	// A mistyped value in an array item is named with its index, said to
	// be what its field takes, and the first in the body is the one named.
	e, _ := Decode([]byte(`{"payment_configurations": [{"max_installments": 1.5}, {"max_installments": true}]}`), new(parcela.OfferRequest)).(*parcela.Error)
	if want := (parcela.FieldError{Field: "payment_configurations[0].max_installments", Code: "invalid_type", Message: "must be an integer"}); e == nil ||
		len(e.Fields) != 1 || e.Fields[0] != want || e.Message != "payment_configurations[0].max_installments must be an integer" {
		t.Errorf("a fraction for an integer: %+v, want %+v", e, want)
	}
	// A rate of the wrong type is named, and said to be a number, as an
	// integer of the wrong type is said to be an integer.
	var req parcela.OfferRequest
	e, _ = Decode([]byte(`{"payment_configurations": [{"interest_rate": "0.02"}]}`), &req).(*parcela.Error)
	if want := (parcela.FieldError{Field: "payment_configurations[0].interest_rate", Code: "invalid_type", Message: "must be a number"}); e == nil ||
		len(e.Fields) != 1 || e.Fields[0] != want || e.Message != "payment_configurations[0].interest_rate must be a number" {
		t.Errorf("a string for a rate: %+v, want %+v", e, want)
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	// What Decode accepts, it decodes exactly as encoding/json does.
	var got, want parcela.OfferRequest
	if err := Decode([]byte(offerBody), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(offerBody), &want); err != nil {
		t.Fatal(err)
	}
	if g, _ := json.Marshal(got); string(g) != mustMarshal(t, want) {
		t.Errorf("Decode gave %s, encoding/json %s", g, mustMarshal(t, want))
	}
	var m map[string]any
	if err := Decode([]byte(`{"n": 12345678901234567890.5, "s": "x"}`), &m); err != nil {
		t.Fatal(err)
	}
	if n, ok := m["n"].(json.Number); !ok || n.String() != "12345678901234567890.5" {
		t.Errorf("untyped number decoded as %T %v, want the json.Number as written", m["n"], m["n"])
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFieldsOf(t *testing.T) {
	t.Parallel()
	type Inner struct {
		Promoted string `json:"promoted"`
		Shadowed string `json:"top"`
	}
	type outer struct {
		Inner
		Top      int    `json:"top"`
		Plain    string // named by its Go name
		Skipped  string `json:"-"`
		Options  string `json:"opt,omitempty"`
		internal string
	}
	got := fieldsOf(reflect.TypeFor[outer]())
	want := map[string]reflect.Type{"promoted": reflect.TypeFor[string](), "top": reflect.TypeFor[int](), "Plain": reflect.TypeFor[string](),
		"opt": reflect.TypeFor[string]()}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fieldsOf = %v, want %v", got, want)
	}
	_ = outer{}.internal
}

// FuzzDecode decodes arbitrary bodies into a request type and into an
// untyped value: it never panics, every failure is a malformed request or
// a validation failure, and whatever it accepts is valid UTF-8 that
// encoding/json decodes too.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(offerBody))
	f.Add([]byte(`{"offer": {"name": "A", "name": "B"}}`))
	f.Add([]byte(`{"Offer": {}}`))
	f.Add([]byte("{\"offer\": {\"name\": \"\xff\"}}"))
	f.Add([]byte(`{"offer": {"name": "\ud800"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range []any{new(parcela.OfferRequest), new(parcela.OrderRequest), new(parcela.ChargeRequest), new(map[string]any)} {
			err := Decode(body, v)
			if err == nil {
				if !utf8.Valid(body) || !json.Valid(body) {
					t.Fatalf("accepted %q", body)
				}
				// Nothing was replaced: a U+FFFD decoded is one the body spelt.
				lower := strings.ToLower(string(body))
				if !strings.Contains(lower, `\ufffd`) && !strings.ContainsRune(string(body), utf8.RuneError) {
					var x any
					if json.Unmarshal(body, &x) == nil && hasReplacement(x) {
						t.Fatalf("accepted %q, which decodes with a replacement character", body)
					}
				}
				continue
			}
			e, ok := err.(*parcela.Error)
			if !ok || (e.Code != parcela.EMALFORMED && e.Code != parcela.EINVALID) {
				t.Fatalf("Decode(%q) = %v (%T)", body, err, err)
			}
		}
	})
}

func hasReplacement(x any) bool {
	switch x := x.(type) {
	case string:
		return strings.ContainsRune(x, utf8.RuneError)
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, utf8.RuneError) || hasReplacement(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasReplacement(e) {
				return true
			}
		}
	}
	return false
}

// Timestamp, which a field taking a timestamp or null reads by itself,
// refuses the comma too: "10:00:00,5" is ISO 8601, not RFC 3339.
func TestTimestampRefusesACommaFraction(t *testing.T) {
	if _, err := Timestamp([]byte(`"2026-03-01T10:00:00,5-03:00"`)); err == nil {
		t.Error("a comma before the fraction was taken")
	}
	got, err := Timestamp([]byte(`"2026-03-01T10:00:00.5-03:00"`))
	if err != nil || got.UnixMilli()%1000 != 500 {
		t.Errorf("a point before the fraction: %v, %v", got, err)
	}
}
