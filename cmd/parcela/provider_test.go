package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// chargeOnProduction creates an offer and an order through the production
// listener and charges it, returning the charge's response.
func chargeOnProduction(t *testing.T, ts *testServer, token string) response {
	t.Helper()
	post := func(path, body string) map[string]any {
		t.Helper()
		r := do(t, "POST", ts.prod+"/external_api/v1"+path, token, strings.NewReader(body), nil)
		if r.status != 201 {
			t.Fatalf("POST %s: %d %s", path, r.status, r.body)
		}
		var m map[string]any
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	p := post("/products", `{"product": {"name": "Curso", "full_amount_cents": 150000, "kind": "course"}}`)
	offer := post("/offers", `{"offer": {"name": "Turma", "product_id": "`+p["id"].(string)+`", "amount_cents": 120000},
		"payment_configurations": [{"payment_type": "upfront", "payment_methods": ["pix"], "expires_in_hours": 48}]}`)
	order := post("/orders", `{"order": {"offer_id": "`+offer["id"].(string)+`", "customer_name": "Maria da Silva",
		"customer_birthdate": "1990-05-17", "customer_document": "52998224725", "email": "maria@example.com", "phone": "11987654321",
		"address": {"zipcode": "01310100", "street": "Avenida Paulista", "number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`)
	pc := offer["payment_configurations"].([]any)[0].(map[string]any)["id"].(string)
	return do(t, "POST", ts.prod+"/external_api/v1/orders/"+order["id"].(string)+"/charge", token, strings.NewReader(`{"payment_configuration_id": "`+pc+
		`", "due_day": 10, "installments": 1, "payment": {"payment_method": "pix"}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`), nil)
}

// Without a production provider, production charges answer 503 and the
// start-up log says so once; PARCELA_PRODUCTION_PROVIDER=simulated opts in
// to the simulated bank; any other value stops the start.
func TestProductionProvider(t *testing.T) {
	t.Parallel()
	const none, opted = "production has no payment provider", "production issues payments on the simulated bank"

	dsn := tempDSN(t)
	_, _, token := newCompanyToken(t, dsn, "production")
	ts := startServer(t, dsn, nil)
	r := chargeOnProduction(t, ts, token)
	if r.status != 503 || r.problem(t)["code"] != "unavailable" {
		t.Fatalf("production charge without a provider: %d %s", r.status, r.body)
	}
	if n := strings.Count(ts.stderr.String(), none); n != 1 {
		t.Fatalf("the missing provider was logged %d times:\n%s", n, ts.stderr.String())
	}

	dsn = tempDSN(t)
	_, _, token = newCompanyToken(t, dsn, "production")
	ts = startServer(t, dsn, map[string]string{"PARCELA_PRODUCTION_PROVIDER": "simulated"})
	if r := chargeOnProduction(t, ts, token); r.status != 200 {
		t.Fatalf("production charge on the simulated bank: %d %s", r.status, r.body)
	}
	if log := ts.stderr.String(); strings.Count(log, opted) != 1 || strings.Contains(log, none) {
		t.Fatalf("start-up log:\n%s", log)
	}

	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"serve"}, env(map[string]string{"PARCELA_DATABASE_URL": tempDSN(t),
		"PARCELA_PRODUCTION_PROVIDER": "itau", "PARCELA_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_ADDR": "127.0.0.1:0",
		"PARCELA_OPS_ADDR": "127.0.0.1:0"}), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "PARCELA_PRODUCTION_PROVIDER") {
		t.Fatalf("an unknown provider: %v", err)
	}
}
