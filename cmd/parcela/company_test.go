package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
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

// An operator gives a company what the API's company shows payers: an
// email, a phone, a logo and an address, checked as an order's are (the
// zipcode in its city's state). There were no flags for them: every
// company but the demo showed "address": null and "logo": "" on its
// orders.
func TestCompanyCreateWithContactLogoAndAddress(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	base := []string{"company", "create", "--name", "Escola W", "--document", "11222333000181"}
	address := []string{"--zipcode", "01310-100", "--street", "Avenida Paulista", "--number", "1000", "--complement", "Sala 4",
		"--neighborhood", "Bela Vista", "--city-ibge-code", "3550308"}
	args := append(append(slices.Clone(base), "--slug", "escola-"+sqldbtest.Suffix(), "--email", "contato@escola.example",
		"--phone", "(11) 98765-4321", "--logo", "https://escola.example/logo.png", "--json"), address...)
	var c struct {
		ID, Logo     string
		Email, Phone *string
		Address      map[string]any
	}
	out := cli(t, dsn, args...)
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.Logo != "https://escola.example/logo.png" || c.Email == nil ||
		*c.Email != "contato@escola.example" || c.Phone == nil || *c.Phone != "11987654321" || c.Address["zipcode"] != "01310100" ||
		c.Address["city"] != "São Paulo" || c.Address["state"] != "SP" || c.Address["complement"] != "Sala 4" {
		t.Fatalf("company create: %v %s", err, out)
	}
	// The company on an order shows them.
	var tok struct{ Token string }
	if err := json.Unmarshal([]byte(cli(t, dsn, "token", "create", "--company", c.ID, "--environment", "sandbox", "--json")), &tok); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dsn, nil)
	v1 := ts.sandbox + "/external_api/v1"
	product := do(t, "POST", v1+"/products", tok.Token, strings.NewReader(`{"product": {"name": "Curso", "full_amount_cents": 150000, "kind": "course"}}`), nil)
	var p struct{ ID string }
	if json.Unmarshal(product.body, &p) != nil || product.status != 201 {
		t.Fatalf("product: %d %s", product.status, product.body)
	}
	offer := do(t, "POST", v1+"/offers", tok.Token, strings.NewReader(`{"offer": {"name": "Turma", "product_id": "`+p.ID+`", "amount_cents": 120000},
		"payment_configurations": [{"payment_type": "upfront", "payment_methods": ["pix"]}]}`), nil)
	var o struct{ ID string }
	if json.Unmarshal(offer.body, &o) != nil || offer.status != 201 {
		t.Fatalf("offer: %d %s", offer.status, offer.body)
	}
	order := do(t, "POST", v1+"/orders", tok.Token, strings.NewReader(`{"order": {"offer_id": "`+o.ID+`", "customer_name": "Maria da Silva",
		"customer_birthdate": "1990-05-17", "customer_document": "52998224725", "email": "maria@example.com", "phone": "11987654321",
		"address": {"zipcode": "01310100", "street": "Avenida Paulista", "number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`), nil)
	var shown struct {
		Offer struct {
			Product struct {
				Company struct {
					Logo    string
					Email   *string
					Address *struct{ Zipcode, Street string }
				}
			}
		}
	}
	if err := json.Unmarshal(order.body, &shown); err != nil || order.status != 201 {
		t.Fatalf("order: %d %s", order.status, order.body)
	}
	if co := shown.Offer.Product.Company; co.Logo != c.Logo || co.Email == nil || co.Address == nil || co.Address.Zipcode != "01310100" {
		t.Fatalf("the order's company: %+v", co)
	}

	// Refused, naming the flag: an address in part, a zipcode of another
	// state, an unknown city, a logo that is not an image's address.
	for _, tt := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--street", "Avenida Paulista"}, "--zipcode is required"},
		{append(slices.Clone(address[:len(address)-1]), "3304557"), "--zipcode is not a zipcode of Rio de Janeiro (RJ)"},
		{append(slices.Clone(address[:len(address)-1]), "9999999"), "--city-ibge-code is not a known IBGE municipality"},
		{[]string{"--logo", "javascript:alert(1)"}, "--logo must be an absolute http(s) URL"},
		{[]string{"--phone", "123"}, "--phone "},
	} {
		var outb, errb bytes.Buffer
		args := append(append(slices.Clone(base), "--slug", "escola-"+sqldbtest.Suffix()), tt.extra...)
		err := run(context.Background(), args, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &outb, &errb)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.extra, err, tt.want)
		}
	}
}

// A value company create refuses is named by the flag that sets it, each
// one the command has: the smallest installment's field is
// min_installment_amount_cents, and the message named a flag that does not
// exist (--min-installment-amount-cents).
func TestCompanyCreateNamesTheFlagOfARefusedValue(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	for _, c := range []struct{ flag, value string }{
		{"--min-installment-cents", "-1"}, {"--min-down-payment-cents", "-1"}, {"--max-installments", "0"},
		{"--fine-rate", "0.5"}, {"--boleto-grace-business-days", "9"}, {"--take-rate-type", "both"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"company", "create", "--name", "Escola Z", "--document", "11222333000181",
			"--slug", "escola-" + sqldbtest.Suffix(), c.flag, c.value}, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &errb)
		if err == nil || !strings.HasPrefix(err.Error(), c.flag+" ") {
			t.Errorf("%s %s: %v; want the error to name %s", c.flag, c.value, err, c.flag)
		}
	}
}
