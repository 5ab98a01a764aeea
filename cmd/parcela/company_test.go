package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb/sqldbtest"
)

// The platform's fee and the smallest installment are the operator's: set
// on the company by the CLI, taken by every offer, refused from a seller.
func TestOperatorSetsPlatformSettings(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	var c struct {
		ID                        string
		TakeRateType              string      `json:"take_rate_type"`
		TakeRateValue             json.Number `json:"take_rate_value"`
		MinInstallmentAmountCents int64       `json:"min_installment_amount_cents"`
	}
	out := cli(t, dsn, "company", "create", "--name", "Escola Y", "--document", "11222333000181", "--slug", "escola-"+sqldbtest.Suffix(),
		"--take-rate-type", "absolute", "--take-rate-value", "150", "--min-installment-cents", "8000", "--json")
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.TakeRateType != "absolute" || c.TakeRateValue != "150" || c.MinInstallmentAmountCents != 8000 {
		t.Fatalf("company create: %v %s", err, out)
	}
	var tok struct{ Token string }
	if err := json.Unmarshal([]byte(cli(t, dsn, "token", "create", "--company", c.ID, "--environment", "sandbox", "--json")), &tok); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dsn, nil)
	v1 := ts.sandbox + "/external_api/v1"
	product := do(t, "POST", v1+"/products", tok.Token, strings.NewReader(`{"product": {"name": "Curso", "full_amount_cents": 150000,
		"kind": "course", "shift": "evening", "access_period": "days", "duration_in_days": 365}}`), nil)
	var p struct{ ID string }
	if json.Unmarshal(product.body, &p) != nil || product.status != 201 {
		t.Fatalf("product: %d %s", product.status, product.body)
	}
	offer := func(extra string) response {
		return do(t, "POST", v1+"/offers", tok.Token, strings.NewReader(`{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
			"payment_configurations": [{"payment_type": "upfront", "payment_methods": ["pix"]`+extra+`}]}`), nil)
	}
	created := offer("")
	var o struct {
		PaymentConfigurations []map[string]any `json:"payment_configurations"`
	}
	if err := json.Unmarshal(created.body, &o); err != nil || created.status != 201 {
		t.Fatalf("offer: %d %s", created.status, created.body)
	}
	if pc := o.PaymentConfigurations[0]; pc["take_rate_type"] != "absolute" || pc["take_rate_value"] != float64(150) || pc["min_installment_amount_cents"] != float64(8000) {
		t.Fatalf("the configuration did not take the company's settings: %v", pc)
	}
	for _, extra := range []string{`, "take_rate_type": "percentage"`, `, "take_rate_value": 0`} {
		r := offer(extra)
		field := "payment_configurations[0]." + strings.Split(extra, `"`)[1]
		if r.status != 422 || !strings.Contains(string(r.body), field) || !strings.Contains(string(r.body), "not_allowed") {
			t.Fatalf("a seller's %s: %d %s", field, r.status, r.body)
		}
	}
	if r := offer(`, "min_installment_amount_cents": 7999`); r.status != 422 || !strings.Contains(string(r.body), "min_installment_amount_cents") {
		t.Fatalf("a floor below the company's: %d %s", r.status, r.body)
	}
}

// company create --json prints the company as company list --json does,
// its created_at in the API's form (São Paulo, to the millisecond).
func TestCompanyCreateJSONIsTheListedCompany(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	var created map[string]any
	out := cli(t, dsn, "company", "create", "--name", "Escola Z", "--document", "11222333000181", "--slug", "escola-"+sqldbtest.Suffix(), "--json")
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatalf("company create: %v %s", err, out)
	}
	var listed []map[string]any
	list := cli(t, dsn, "company", "list", "--json")
	if err := json.Unmarshal([]byte(list), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("company list: %v %s", err, list)
	}
	if !reflect.DeepEqual(created, listed[0]) {
		t.Fatalf("company create --json\n%s\ncompany list --json\n%s", out, list)
	}
	at, _ := created["created_at"].(string)
	if _, err := time.Parse(parcela.TimestampLayout, at); err != nil || !strings.HasSuffix(at, "-03:00") {
		t.Fatalf("created_at %q is not in the API's form: %v", at, err)
	}
}
