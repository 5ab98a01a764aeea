package parcela

import (
	"encoding/json"
	"testing"
	"time"
)

// orderRequest decodes an order body with each given field of order (or of
// order.address, prefixed "address.") replaced; a nil value removes it.
func orderRequest(t *testing.T, changes map[string]any) OrderRequest {
	t.Helper()
	address := map[string]any{"zipcode": "01310-100", "street": "Avenida Paulista", "number": "1000", "complement": "Apto 12",
		"neighborhood": "Bela Vista", "city_ibge_code": "3550308"}
	order := map[string]any{"offer_id": "6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10", "customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17",
		"customer_document": "529.982.247-25", "email": "maria@example.com", "phone": "(11) 98765-4321", "address": address}
	for k, v := range changes {
		m, key := order, k
		if len(k) > 8 && k[:8] == "address." {
			m, key = address, k[8:]
		}
		if v == nil {
			delete(m, key)
		} else {
			m[key] = v
		}
	}
	body, err := json.Marshal(map[string]any{"order": order})
	if err != nil {
		t.Fatal(err)
	}
	var req OrderRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestBuildOrder(t *testing.T) {
	t.Parallel()
	now := calSP(2026, time.March, 5, 10, 0, 0, 0)
	tests := []struct {
		name    string
		changes map[string]any
		field   string // the field at fault, "" when valid
		code    string
	}{
		{"valid", nil, "", ""},
		{"phone with +55", map[string]any{"phone": "+55 11 98765-4321"}, "", ""},
		{"phone with 55", map[string]any{"phone": "5511987654321"}, "", ""},
		{"landline", map[string]any{"phone": "(11) 3234-5678"}, "", ""},
		{"mobile without its 9", map[string]any{"phone": "(11) 88765-4321"}, "order.phone", "invalid"},
		{"unknown area code", map[string]any{"phone": "(20) 98765-4321"}, "order.phone", "invalid"},
		{"email with a one-letter TLD", map[string]any{"email": "maria@example.c"}, "order.email", "invalid"},
		{"email with _ in the domain", map[string]any{"email": "maria@my_host.com"}, "order.email", "invalid"},
		{"zipcode 00000000", map[string]any{"address.zipcode": "00000-000"}, "order.address.zipcode", "invalid"},
		{"zipcode of 7 digits", map[string]any{"address.zipcode": "0131010"}, "order.address.zipcode", "invalid"},
		{"born in 1899", map[string]any{"customer_birthdate": "1899-12-31"}, "order.customer_birthdate", "invalid"},
		{"born on 1 January 1900", map[string]any{"customer_birthdate": "1900-01-01"}, "", ""},
		{"born tomorrow", map[string]any{"customer_birthdate": "2026-03-06"}, "order.customer_birthdate", "invalid"},
		{"born today", map[string]any{"customer_birthdate": "2026-03-05"}, "order.customer_birthdate", "invalid"},
		{"born yesterday (a minor may buy upfront)", map[string]any{"customer_birthdate": "2026-03-04"}, "", ""},
		{"NUL in the name", map[string]any{"customer_name": "Maria\x00"}, "order.customer_name", "invalid"},
		{"line break in the street", map[string]any{"address.street": "Avenida\nPaulista"}, "order.address.street", "invalid"},
		{"escape in the complement", map[string]any{"address.complement": "Apto\x1b12"}, "order.address.complement", "invalid"},
		{"tab in the neighborhood", map[string]any{"address.neighborhood": "Bela\tVista"}, "order.address.neighborhood", "invalid"},
		{"NUL in the number", map[string]any{"address.number": "10\x000"}, "order.address.number", "invalid"},
		{"offer id not a UUID", map[string]any{"offer_id": "abc"}, "order.offer_id", "not_found"},
		{"offer id with NUL", map[string]any{"offer_id": "6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a1\x00"}, "order.offer_id", "invalid"},
		{"CPF with a wrong check digit", map[string]any{"customer_document": "52998224724"}, "order.customer_document", "invalid"},
	}
	for _, tt := range tests {
		o, err := BuildOrder(orderRequest(t, tt.changes), now)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Code != EINVALID || e.Fields[0].Field != tt.field || e.Fields[0].Code != tt.code {
			t.Errorf("%s: err = %v (%+v, %v), want %s on %s", tt.name, err, o, e, tt.code, tt.field)
		}
	}

	o, err := BuildOrder(orderRequest(t, map[string]any{"phone": "+55 (11) 98765-4321"}), now)
	if err != nil {
		t.Fatal(err)
	}
	if o.Phone != "11987654321" || o.CustomerDocument != "52998224725" || o.Address.Zipcode != "01310100" {
		t.Errorf("stored phone %q document %q zipcode %q, want digits only", o.Phone, o.CustomerDocument, o.Address.Zipcode)
	}
}

func TestIsAdultAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		birthdate string
		now       time.Time
		want      bool
	}{
		{"2008-03-05", calSP(2026, time.March, 5, 0, 0, 0, 0), true},       // the 18th birthday, from its first instant
		{"2008-03-05", calSP(2026, time.March, 4, 23, 59, 59, 999), false}, // the evening before
		// 02:00 UTC on 5 March is still 4 March in São Paulo.
		{"2008-03-05", time.Date(2026, time.March, 5, 2, 0, 0, 0, time.UTC), false},
		{"2008-02-29", calSP(2026, time.February, 28, 12, 0, 0, 0), false}, // born on 29 February …
		{"2008-02-29", calSP(2026, time.March, 1, 0, 0, 0, 0), true},       // … of age on 1 March
		{"2008-02-29", calSP(2028, time.February, 29, 0, 0, 0, 0), true},
		{"1990-05-17", calSP(2026, time.March, 5, 0, 0, 0, 0), true},
		{"2010-01-01", calSP(2026, time.March, 5, 0, 0, 0, 0), false},
		{"not a date", calSP(2026, time.March, 5, 0, 0, 0, 0), false},
	}
	for _, tt := range tests {
		if got := IsAdultAt(tt.birthdate, tt.now); got != tt.want {
			t.Errorf("IsAdultAt(%s, %v) = %v, want %v", tt.birthdate, tt.now, got, tt.want)
		}
	}
}
