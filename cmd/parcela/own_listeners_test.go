package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With the README's own development setting, PARCELA_WEBHOOK_ALLOWED_CIDRS=
// 127.0.0.0/8, a sandbox token read the operations listener (which asks no
// token) through its webhook's delivery log: a webhook whose URL was the
// ops listener's /debug/pprof/goroutine?debug=2 was "delivered", and the
// attempt kept the first 4 KiB of the goroutine dump, which can show
// tokens and payers' data (an audit). The process's own listeners are no
// webhook's target, whatever range is opened: a URL naming one is 422 on
// url when the webhook is created or its URL changed, as the contract
// says (a later audit: under serve it was 201 and every delivery refused),
// and a delivery that reaches one anyway (a name that resolves to it, here
// a URL written by hand) is refused when it connects.
func TestWebhookNeverReachesTheOwnListeners(t *testing.T) {
	ts := startServer(t, tempDSN(t), nil, "--demo") // PARCELA_WEBHOOK_ALLOWED_CIDRS=127.0.0.0/8
	var token, offer, financed string
	for _, line := range strings.Split(ts.stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "sandbox token (shown once): "); ok {
			token = v
		}
		if f := strings.Fields(line); len(f) >= 8 && f[0] == "offer" && f[2] == "(upfront" {
			offer, financed = f[1], strings.TrimSuffix(f[7], ")")
		}
	}
	api := ts.sandbox + "/external_api/v1"
	pprof := ts.ops + "/debug/pprof/goroutine?debug=2"
	for _, own := range []string{pprof, ts.ops + "/metrics", ts.sandbox + "/healthz", ts.prod + "/healthz",
		strings.Replace(ts.ops, "127.0.0.1", "localhost", 1) + "/metrics", strings.Replace(ts.ops, "127.0.0.1", "[::ffff:127.0.0.1]", 1) + "/metrics"} {
		r := do(t, "POST", api+"/webhooks", token, strings.NewReader(`{"name":"x","verb":"POST","entity":"billing",
			"events":["waiting_payment","active"],"url":"`+own+`"}`), nil)
		if r.status != 422 || !strings.Contains(string(r.body), `"url"`) || !strings.Contains(string(r.body), "own listeners") {
			t.Errorf("webhook at own listener %s: %d %.300s, want 422 on url", own, r.status, r.body)
		}
	}
	r := do(t, "POST", api+"/webhooks", token, strings.NewReader(`{"name":"x","verb":"POST","entity":"billing",
		"events":["waiting_payment","active"],"url":"http://127.0.0.1:1/hook"}`), nil)
	if r.status != 201 {
		t.Fatalf("webhook: %d %s", r.status, r.body)
	}
	var w struct{ ID string }
	if err := json.Unmarshal(r.body, &w); err != nil {
		t.Fatal(err)
	}
	if r = do(t, "PATCH", api+"/webhooks/"+w.ID, token, strings.NewReader(`{"url":"`+pprof+`"}`), nil); r.status != 422 {
		t.Errorf("PATCH to the operations listener: %d %.300s, want 422 on url", r.status, r.body)
	}
	db, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(ts.dsn, "sqlite:")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE webhooks SET url = ? WHERE id = ?`, pprof, w.ID); err != nil {
		t.Fatal(err)
	}
	r = do(t, "POST", api+"/orders", token, strings.NewReader(`{"order": {"offer_id": "`+offer+`", "customer_name": "Maria da Silva",
		"customer_birthdate": "1990-05-17", "customer_document": "52998224725", "email": "maria@example.com", "phone": "11987654321",
		"address": {"zipcode": "01310100", "street": "Avenida Paulista", "number": "1000", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}`), nil)
	var o struct{ ID string }
	if err := json.Unmarshal(r.body, &o); err != nil {
		t.Fatalf("order: %v: %s", err, r.body)
	}
	r = do(t, "POST", api+"/orders/"+o.ID+"/charge", token, strings.NewReader(`{"payment_configuration_id": "`+financed+`", "due_day": 10,
		"installments": 4, "payment": {"payment_method": "pix"}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "curl"}}`), nil)
	if r.status != 200 {
		t.Fatalf("charge: %d %s", r.status, r.body)
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		r = do(t, "GET", api+"/webhook_deliveries?webhook_id="+w.ID, token, nil, nil)
		if strings.Contains(string(r.body), "goroutine") || strings.Contains(string(r.body), "pprof.") {
			t.Fatalf("a sandbox token read the operations listener through its delivery log: %.300s", r.body)
		}
		if strings.Contains(string(r.body), "own listeners") {
			return
		}
	}
	t.Fatalf("no attempt refused as one of parcela's own listeners: %.500s", r.body)
}

// A range no deployment means to open to webhooks is warned of at start.
func TestAllowedCIDRsWarnings(t *testing.T) {
	for cidrs, warned := range map[string]int{
		"": 0, "127.0.0.0/8": 0, "127.0.0.0/8,::1/128": 0, "0.0.0.0/0": 1, "::/0": 1,
		"169.254.0.0/16": 1, "169.254.169.254/32": 1, "10.0.0.0/8, 0.0.0.0/0": 1,
	} {
		if got := allowedCIDRsWarnings(cidrs); len(got) != warned {
			t.Errorf("%q: %q", cidrs, got)
		}
	}
}

// A public URL naming the other environment's listener (set for one, the
// other left to its listener's address) stops the start: every link of
// one environment opened the other's 404 (an audit).
func TestPublicURLOfTheOtherListenerIsRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for name, vars := range map[string]map[string]string{
		"sandbox URL naming production": {"PARCELA_ADDR": addr, "PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_PUBLIC_URL": "http://" + addr},
		"production URL naming sandbox": {"PARCELA_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_ADDR": addr, "PARCELA_PUBLIC_URL": "http://" + addr},
	} {
		vars["PARCELA_DATABASE_URL"], vars["PARCELA_OPS_ADDR"] = filepath.Join(t.TempDir(), "parcela.db"), "127.0.0.1:0"
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"serve"}, env(vars), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "other environment's listener") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
