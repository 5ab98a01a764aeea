package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// killRoundsEnv turns on TestKill9MixedTraffic (its number of kills per
// engine): it builds the binary and kills it for real, too slow for CI.
const killRoundsEnv = "PARCELA_TEST_KILL_ROUNDS"

// killWaitIntentsEnv makes TestKill9MixedTraffic wait for the recovery
// sweep to void the payment intents the kills left issuing (minutes).
const killWaitIntentsEnv = "PARCELA_TEST_KILL_WAIT_INTENTS"

// binaryServer is the built parcela binary serving on 127.0.0.1.
type binaryServer struct {
	cmd     *exec.Cmd
	sandbox string
	done    chan struct{}
}

func startBinary(t *testing.T, bin, dsn string) *binaryServer {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "PARCELA_DATABASE_URL="+dsn, "PARCELA_ADDR=127.0.0.1:0", "PARCELA_SANDBOX_ADDR=127.0.0.1:0",
		"PARCELA_OPS_ADDR=127.0.0.1:0", "PARCELA_SANDBOX_RATE_LIMIT=0", "PARCELA_LOG_LEVEL=error",
		"PARCELA_WEBHOOK_ALLOWED_CIDRS=127.0.0.0/8", "PARCELA_TOKEN_CACHE_TTL=0s")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &binaryServer{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "sandbox "); ok {
				addr <- a
			}
		}
		_ = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() { s.kill() })
	select {
	case s.sandbox = <-addr:
	case <-s.done:
		t.Fatal("the server exited before printing its address")
	case <-time.After(60 * time.Second):
		t.Fatal("the server printed no address")
	}
	// Ready, not only listening: the requests that follow must be served.
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.sandbox + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered 200: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *binaryServer) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// sent is one request with an Idempotency-Key and the first answer it got.
type sent struct {
	method, path, key string
	body              []byte
	status            int
	answer            []byte
	answered          bool
}

// TestKill9MixedTraffic kills the built binary with SIGKILL at random
// moments under concurrent orders, charges, sandbox payments, expiries,
// waivers, cancels and webhook deliveries, restarts it, retries every
// request with its key, and checks the stored state.
func TestKill9MixedTraffic(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv(killRoundsEnv))
	if rounds == 0 {
		t.Skip("set " + killRoundsEnv + " to the number of kills per engine")
	}
	bin := filepath.Join(t.TempDir(), "parcela")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) { kill9Mixed(t, bin, sqldbtest.DSN(t, e), rounds) })
	}
}

func kill9Mixed(t *testing.T, bin, dsn string, rounds int) {
	companyID, _, token := newCompanyToken(t, dsn, "sandbox")
	var seenMu sync.Mutex
	seen := map[string]int{} // webhook-id+url path → deliveries received
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenMu.Lock()
		seen[r.URL.Path+" "+r.Header.Get("webhook-id")]++
		seenMu.Unlock()
		w.WriteHeader(200)
	}))
	defer recv.Close()

	var cur atomic.Pointer[binaryServer]
	cur.Store(startBinary(t, bin, dsn))
	var logMu sync.Mutex
	var log []*sent
	var requests, kills, inFlights atomic.Int64
	// call sends a request until some server answers it (the one it was
	// sent to may be killed meanwhile), with key if not empty.
	call := func(method, path string, body any, key string) ans {
		var b []byte
		if body != nil {
			b, _ = json.Marshal(body)
		}
		s := &sent{method: method, path: path, key: key, body: b}
		deadline := time.Now().Add(3 * time.Minute)
		for {
			requests.Add(1)
			req, _ := http.NewRequest(method, cur.Load().sandbox+"/external_api/v1"+path, strings.NewReader(string(b)))
			req.Header.Set("Authorization", "Bearer "+token)
			if b != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			if key != "" {
				req.Header.Set("Idempotency-Key", key)
			}
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				out, rerr := io.ReadAll(res.Body)
				res.Body.Close()
				// A kill between a PATCH's commit and its stored answer
				// leaves its key in flight for up to a minute (by design).
				inFlight := res.StatusCode == 409 && strings.Contains(string(out), `"idempotency_in_flight"`)
				if inFlight {
					inFlights.Add(1)
				}
				if rerr == nil && res.StatusCode != 503 && !inFlight {
					if key != "" {
						s.status, s.answer, s.answered = res.StatusCode, out, true
						logMu.Lock()
						log = append(log, s)
						logMu.Unlock()
					}
					if res.StatusCode >= 500 {
						t.Errorf("%s %s (key %s): %d %s", method, path, key, res.StatusCode, out)
					}
					return ans{res.StatusCode, out}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s never answered: %v", method, path, err)
			}
			time.Sleep(30 * time.Millisecond)
		}
	}
	must := func(a ans, what string) map[string]any {
		status, body := a.status, a.body
		var m map[string]any
		if status/100 != 2 || json.Unmarshal(body, &m) != nil {
			t.Fatalf("%s: %d %s", what, status, body)
		}
		return m
	}
	for entity, events := range map[string][]string{"order": {"in_progress", "finished", "canceled"},
		"billing": {"waiting_payment", "active", "finished", "canceled"}, "bill": {"pending", "paid", "overdue", "canceled"}} {
		must(call("POST", "/webhooks", map[string]any{"name": entity, "url": recv.URL + "/" + entity, "entity": entity, "events": events, "verb": "post"}, "hook-"+entity), "webhook")
	}
	p := must(call("POST", "/products", map[string]any{"product": map[string]any{"name": "Curso", "full_amount_cents": 200000}}, "product"), "product")
	offer := must(call("POST", "/offers", map[string]any{"offer": map[string]any{"name": "Turma", "product_id": p["id"], "amount_cents": 200000},
		"payment_configurations": []any{
			map[string]any{"payment_type": "financed", "allowed_down_payment_methods": []string{"pix", "boleto"},
				"down_payment_type": "percentage", "down_payment_value": 0.2, "max_installments": 12},
			map[string]any{"payment_type": "upfront", "payment_methods": []string{"pix", "boleto"}},
		}}, "offer"), "offer")
	configs := offer["payment_configurations"].([]any)

	// Workers run scenarios until the last kill.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var scenarios atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				scenarios.Add(1)
				k := fmt.Sprintf("w%d-%d-%s", w, n, sqldbtest.Suffix())
				order := must(call("POST", "/orders", map[string]any{"order": map[string]any{"offer_id": offer["id"], "customer_name": "Ana",
					"customer_birthdate": "1990-01-01", "customer_document": "52998224725", "email": "ana@example.com", "phone": "11987654321",
					"address": map[string]any{"zipcode": "01310100", "street": "Av. Paulista", "number": "1", "neighborhood": "Bela Vista",
						"city_ibge_code": "3550308"}}}, "order-"+k), "order")
				id := order["id"].(string)
				method := []string{"pix", "boleto"}[n%2]
				cfg := configs[(n/2)%2].(map[string]any)
				charge := map[string]any{"payment_configuration_id": cfg["id"], "payment": map[string]any{"payment_method": method},
					"signature": map[string]any{"remote_ip": "203.0.113.9", "user_agent": "test"}}
				if cfg["payment_type"] == "financed" {
					charge["due_day"], charge["installments"] = 5, 3
				} else {
					charge["due_day"], charge["installments"] = 5, 1
				}
				if a := call("POST", "/orders/"+id+"/charge", charge, "charge-"+k); a.status != 200 {
					t.Errorf("charge %s: %d %s", k, a.status, a.body)
					continue
				}
				bills := must(call("GET", "/bills?order_id="+id, nil, ""), "bills")
				var billID, paymentID string
				var amount float64
				for _, b := range asList(bills["results"]) {
					bm := b.(map[string]any)
					for _, py := range asList(bm["payments"]) {
						pm := py.(map[string]any)
						if pm["status"] == "unpaid" && paymentID == "" {
							billID, paymentID, amount = bm["id"].(string), pm["id"].(string), pm["amount_cents"].(float64)
						}
					}
				}
				if paymentID == "" {
					t.Errorf("order %s: no unpaid payment in %v", id, bills)
					continue
				}
				switch rand.IntN(5) {
				case 0: // paid in two parts
					half := int(amount) / 2
					call("POST", "/sandbox/payments/"+paymentID+"/pay", map[string]any{"paid_amount_cents": half, "notice_id": "n1-" + k}, "pay1-"+k)
					call("POST", "/sandbox/payments/"+paymentID+"/pay", map[string]any{"paid_amount_cents": int(amount) - half, "notice_id": "n2-" + k}, "pay2-"+k)
				case 1:
					call("POST", "/sandbox/payments/"+paymentID+"/pay", nil, "pay-"+k)
				case 2:
					call("POST", "/sandbox/payments/"+paymentID+"/expire", nil, "expire-"+k)
				case 3:
					// A reason the API takes: "customer_request" was refused
					// 422, and no order was ever canceled under a kill (an audit).
					if a := call("POST", "/orders/"+id+"/cancel", map[string]any{"reason": "customer_dropout"}, "cancel-"+k); a.status != 200 {
						t.Errorf("cancel %s: %d %s", id, a.status, a.body)
					}
				case 4:
					call("PATCH", "/bills/"+billID, map[string]any{"bill": map[string]any{"disable_penalties_until": "2030-01-01T00:00:00-03:00"}}, "waive-"+k)
					call("POST", "/sandbox/payments/"+paymentID+"/pay", nil, "pay-"+k)
				}
			}
		}()
	}
	for range rounds {
		time.Sleep(time.Duration(200+rand.IntN(1500)) * time.Millisecond)
		cur.Load().kill()
		kills.Add(1)
		cur.Store(startBinary(t, bin, dsn))
	}
	close(stop)
	wg.Wait()

	// Every retry answers what the first answer was.
	logMu.Lock()
	all := append([]*sent{}, log...)
	logMu.Unlock()
	seenKey := map[string]bool{}
	for _, s := range all {
		if seenKey[s.key] {
			continue
		}
		seenKey[s.key] = true
		req, _ := http.NewRequest(s.method, cur.Load().sandbox+"/external_api/v1"+s.path, strings.NewReader(string(s.body)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", s.key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != s.status || string(out) != string(s.answer) {
			t.Errorf("retry of %s %s (key %s) answered %d %s\nfirst %d %s", s.method, s.path, s.key, res.StatusCode, out, s.status, s.answer)
		}
	}

	db, err := sqldb.Open(context.Background(), dsn, sqldb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := func(query string) [][]string {
		rows, err := db.SQLDB().QueryContext(context.Background(), strings.ReplaceAll(query, "$C", "'"+companyID+"'"))
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out [][]string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = fmt.Sprint(v)
				if b, ok := v.([]byte); ok {
					row[i] = string(b)
				}
			}
			out = append(out, row)
		}
		return out
	}
	// Deliveries and intents drain.
	deadline := time.Now().Add(90 * time.Second)
	// An intent a kill left issuing is voided after parcela.IntentTimeout
	// (the binary's clock cannot be moved): it is counted, not waited for.
	for len(q(`SELECT id FROM webhook_deliveries WHERE company_id = $C AND status <> 'delivered'`)) > 0 {
		if time.Now().After(deadline) {
			t.Errorf("not drained: deliveries %v", q(`SELECT id, status FROM webhook_deliveries WHERE company_id = $C AND status <> 'delivered'`))
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	check := func(what, query string) {
		if rows := q(query); len(rows) > 0 {
			t.Errorf("%s: %v", what, rows)
		}
	}
	check("a canceled order with a live billing", `SELECT o.id, b.status FROM orders o JOIN billings b ON b.order_id = o.id
		WHERE o.company_id = $C AND o.status = 'canceled' AND b.status IN ('waiting_payment', 'active')`)
	check("an order in progress with its billing canceled", `SELECT o.id FROM orders o JOIN billings b ON b.order_id = o.id
		WHERE o.company_id = $C AND o.status = 'in_progress' AND b.status = 'canceled' AND b.origin_billing_id IS NULL`)
	check("a bill with two live payments", `SELECT bill_id, COUNT(*) FROM payments WHERE company_id = $C AND status = 'unpaid'
		GROUP BY bill_id HAVING COUNT(*) > 1`)
	check("a paid bill whose payments received less than it", `SELECT b.id, b.amount_cents, SUM(p.paid_amount_cents) FROM bills b JOIN payments p ON p.bill_id = b.id
		WHERE b.company_id = $C AND b.status = 'paid' AND b.disable_penalties_until IS NULL GROUP BY b.id, b.amount_cents HAVING SUM(p.paid_amount_cents) < b.amount_cents`)
	check("an open bill with a paid payment", `SELECT b.id, b.status FROM bills b JOIN payments p ON p.bill_id = b.id
		WHERE b.company_id = $C AND b.status IN ('pending', 'overdue') AND p.status = 'paid'`)
	check("a billing waiting for a paid first bill", `SELECT bl.id FROM billings bl JOIN bills b ON b.billing_id = bl.id
		WHERE bl.company_id = $C AND bl.status = 'waiting_payment' AND b.number = 1 AND b.status = 'paid'`)
	check("a finished billing with an open bill", `SELECT bl.id FROM billings bl JOIN bills b ON b.billing_id = bl.id
		WHERE bl.company_id = $C AND bl.status = 'finished' AND b.status IN ('pending', 'overdue')`)
	check("an upfront order not finished though paid", `SELECT o.id, o.status FROM orders o JOIN billings bl ON bl.order_id = o.id
		WHERE o.company_id = $C AND bl.status = 'finished' AND o.status <> 'finished'`)
	check("two deliveries of one event to one webhook", `SELECT webhook_id, event_id FROM webhook_deliveries WHERE company_id = $C
		GROUP BY webhook_id, event_id HAVING COUNT(*) > 1`)
	check("an event without its delivery", `SELECT e.id, e.entity, e.event FROM events e JOIN webhooks w ON w.company_id = e.company_id AND w.entity = e.entity
		WHERE e.company_id = $C AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.webhook_id = w.id)`)
	seenMu.Lock()
	for _, d := range q(`SELECT w.entity, d.event_id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.company_id = $C`) {
		if seen["/"+d[0]+" "+d[1]] == 0 {
			t.Errorf("delivery of event %s to the %s webhook never reached the receiver", d[1], d[0])
		}
	}
	seenMu.Unlock()
	check("an intent left issuing whose payment was stored", `SELECT i.id FROM payment_intents i JOIN payments p ON p.id = i.id
		WHERE i.company_id = $C AND i.state IN ('issuing', 'voiding')`)
	open := `SELECT id, state FROM payment_intents WHERE company_id = $C AND state IN ('issuing', 'voiding')`
	t.Logf("%d intents left to the recovery sweep", len(q(open)))
	if os.Getenv(killWaitIntentsEnv) != "" {
		// The sweep runs every minute and voids what is older than
		// parcela.IntentTimeout.
		deadline := time.Now().Add(parcela.IntentTimeout + 90*time.Second)
		for len(q(open)) > 0 && time.Now().Before(deadline) {
			time.Sleep(time.Second)
		}
		check("an intent the recovery sweep left unresolved", open)
	}
	t.Logf("%d kills, %d scenarios, %d requests sent (%d answered in flight), %d keyed answers, %d events", kills.Load(), scenarios.Load(),
		requests.Load(), inFlights.Load(), len(all),
		len(q(`SELECT id FROM events WHERE company_id = $C`)))
}

type ans struct {
	status int
	body   []byte
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
