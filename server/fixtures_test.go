package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http/httptest"
	"os"
	"parcela"
	"parcela/api"
	"parcela/server"
	"parcela/sqldb/sqldbtest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func productBody() map[string]any {
	return map[string]any{"product": map[string]any{
		"name": "Curso de Confeitaria", "full_amount_cents": 150000, "description": "Do básico ao avançado",
		"kind": "course", "shift": "evening", "access_period": "days", "duration_in_days": 365, "duration_in_hours": 120,
		"metadata": map[string]any{"sku": "CONF-1"},
	}}
}

func offerBody(productID string) map[string]any {
	return map[string]any{
		"offer": map[string]any{"name": "Turma de janeiro", "product_id": productID, "amount_cents": 120000, "seats": 30},
		"payment_configurations": []any{
			map[string]any{"payment_type": "upfront", "payment_methods": []string{"pix", "boleto"}, "expires_in_hours": 48},
			map[string]any{"payment_type": "financed", "financed_type": "bolepix", "payment_methods": []string{"boleto"},
				"allowed_down_payment_methods": []string{"pix", "boleto"}, "down_payment_type": "percentage",
				"down_payment_value": json.Number("0.2"), "interest_rate": json.Number("0.0299"), "max_installments": 12,
				"registration_fee": json.Number("0.05"), "expires_in_hours": 72},
		},
	}
}

func orderBody(offerID string) map[string]any {
	return map[string]any{"order": map[string]any{
		"offer_id": offerID, "customer_name": "Maria da Silva", "customer_birthdate": "1990-05-17",
		"customer_document": "529.982.247-25", "email": "maria@example.com", "phone": "(11) 98765-4321",
		"address": map[string]any{"zipcode": "01310-100", "street": "Avenida Paulista", "number": "1000",
			"complement": "Apto 12", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"},
	}}
}

func (b *bundle) product() map[string]any {
	b.t.Helper()
	return b.call("POST", "/external_api/v1/products", productBody()).want(b.t, 201).JSON(b.t)
}

func (b *bundle) offer() map[string]any {
	b.t.Helper()
	p := b.product()
	return b.call("POST", "/external_api/v1/offers", offerBody(p["id"].(string))).want(b.t, 201).JSON(b.t)
}

func (b *bundle) order() (offer, order map[string]any) {
	b.t.Helper()
	offer = b.offer()
	order = b.call("POST", "/external_api/v1/orders", orderBody(offer["id"].(string))).want(b.t, 201).JSON(b.t)
	return offer, order
}

// golden compares body, with ids replaced by stable names, to a file in testdata/golden.
func golden(t *testing.T, name string, body []byte, names ...string) {
	t.Helper()
	for i, n := range names {
		body = bytes.ReplaceAll(body, []byte(n), []byte("name-"+strconv.Itoa(i+1)))
	}
	ids := map[string]string{}
	norm := uuidRE.ReplaceAllFunc(body, func(id []byte) []byte {
		if n, ok := ids[string(id)]; ok {
			return []byte(n)
		}
		n := "id-" + strconv.Itoa(len(ids)+1)
		ids[string(id)] = n
		return []byte(n)
	})
	var v any
	if err := json.Unmarshal(norm, &v); err != nil {
		t.Fatal(err)
	}
	mask(v)
	pretty, _ := json.MarshalIndent(v, "", "  ")
	pretty = append(pretty, '\n')
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./server -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(want, pretty) {
		t.Errorf("%s differs from %s:\n%s", name, path, pretty)
	}
}

// varying holds fields whose values differ between runs (the boleto's
// nosso número, the Pix txid, random codes); they are checked elsewhere, so
// goldens keep only whether they are set.
var varying = map[string]bool{"barcode": true, "pix_code": true, "authentication_code": true, "checkout_url": true}

func mask(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if varying[k] && val != nil {
				x[k] = "<" + k + ">"
				continue
			}
			if u, ok := val.(string); ok && k == "url" {
				// An order's page carries its random access code.
				if i := strings.Index(u, "?code="); i >= 0 {
					x[k] = u[:i] + "?code=<access_code>"
				}
				continue
			}
			mask(val)
		}
	case []any:
		for _, e := range x {
			mask(e)
		}
	}
}

// otherInstance is a second server over b's store and clock, as another
// instance of the same deployment, closed with t.
func (b *bundle) otherInstance(t *testing.T) *httptest.Server {
	t.Helper()
	other := httptest.NewServer(server.New(server.ServicesOf(b.app, b.db), server.Config{Environment: parcela.Sandbox, Clock: b.clock,
		PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}))
	t.Cleanup(other.Close)
	return other
}
