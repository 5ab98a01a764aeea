package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"parcela/webhook"
)

// Stopping the server while deliveries are in flight loses none: after a
// restart on the same database every event reaches the receiver.
func TestNoDeliveryLostAcrossAStop(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	_, _, token := newCompanyToken(t, dsn, "sandbox")
	env := map[string]string{"PARCELA_SANDBOX_RATE_LIMIT": "0", "PARCELA_SHUTDOWN_TIMEOUT": "300ms"}
	a := startServer(t, dsn, env)

	var mu sync.Mutex
	secrets := []string{}
	seen := map[string]bool{}
	blocked := true
	inFlight := make(chan struct{}, 100)
	release := make(chan struct{})
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		block, keys := blocked, append([]string{}, secrets...)
		mu.Unlock()
		if block {
			inFlight <- struct{}{}
			select { // hold the request until the server is gone
			case <-release:
			case <-r.Context().Done():
				return
			}
			w.WriteHeader(503)
			return
		}
		ok := false
		for _, k := range keys {
			if webhook.Verify(k, r.Header, body, time.Now(), time.Minute) == nil {
				ok = true
			}
		}
		if !ok {
			t.Errorf("delivery %s is not signed by any webhook secret", r.Header.Get("webhook-id"))
		}
		mu.Lock()
		seen[r.Header.Get("webhook-id")] = true
		mu.Unlock()
		w.WriteHeader(200)
	}))
	defer recv.Close()
	defer close(release)

	v1 := a.sandbox + "/external_api/v1"
	post := func(path string, body any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		r := do(t, "POST", v1+path, token, strings.NewReader(string(b)), nil)
		if r.status != 200 && r.status != 201 {
			t.Fatalf("POST %s: %d %s", path, r.status, r.body)
		}
		var m map[string]any
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		return m
	}
	for entity, events := range map[string][]string{"order": {"in_progress"}, "billing": {"waiting_payment"}, "bill": {"pending"}} {
		h := post("/webhooks", map[string]any{"name": entity, "url": recv.URL + "/hook", "entity": entity, "events": events, "verb": "post"})
		mu.Lock()
		secrets = append(secrets, h["secret"].(string))
		mu.Unlock()
	}
	p := post("/products", map[string]any{"product": map[string]any{"name": "Curso", "full_amount_cents": 200000}})
	offer := post("/offers", map[string]any{"offer": map[string]any{"name": "Turma", "product_id": p["id"], "amount_cents": 200000},
		"payment_configurations": []any{map[string]any{"payment_type": "financed", "allowed_down_payment_methods": []string{"pix"},
			"down_payment_type": "percentage", "down_payment_value": 0.2, "max_installments": 12}}})
	cfg := offer["payment_configurations"].([]any)[0].(map[string]any)["id"]
	order := post("/orders", map[string]any{"order": map[string]any{"offer_id": offer["id"], "customer_name": "Ana", "customer_birthdate": "1990-01-01",
		"customer_document": "52998224725", "email": "ana@example.com", "phone": "11987654321",
		"address": map[string]any{"zipcode": "01310100", "street": "Av. Paulista", "number": "1", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}})
	post("/orders/"+order["id"].(string)+"/charge", map[string]any{"payment_configuration_id": cfg, "due_day": 5, "installments": 12,
		"payment": map[string]any{"payment_method": "pix"}, "signature": map[string]any{"remote_ip": "203.0.113.9", "user_agent": "test"}})
	// 1 order + 1 billing + 12 bill events.
	const want = 14

	select {
	case <-inFlight:
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery reached the receiver")
	}
	a.stop() // deliveries are held mid-request: the stop cuts them off
	mu.Lock()
	blocked = false
	mu.Unlock()

	// The access log saw the order and charge requests; it holds no personal data or token.
	for _, secret := range []string{"52998224725", "ana@example.com", "11987654321", "1990-01-01", token} {
		if strings.Contains(a.stderr.String(), secret) {
			t.Fatalf("the log holds %q", secret)
		}
	}
	if !strings.Contains(a.stderr.String(), `"route":"POST /external_api/v1/orders/{id}/charge"`) {
		t.Fatalf("no access log line for the charge:\n%s", a.stderr.String())
	}

	b := startServer(t, dsn, env)
	deadline := time.Now().Add(45 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart %d of %d events were delivered", n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The delivery metrics are exported on the operations listener.
	m := do(t, "GET", b.ops+"/metrics", "", nil, nil)
	for _, name := range []string{`parcela_webhook_deliveries_total{outcome="delivered"}`, "parcela_webhook_attempt_duration_seconds_count", "parcela_webhook_queue_depth"} {
		if !strings.Contains(string(m.body), name) {
			t.Errorf("metrics lack %s", name)
		}
	}
}
