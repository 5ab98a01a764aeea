package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// crashChildEnv names the fault point at which the child process kills
// itself; the parent sets it when it runs this binary as a server.
const crashChildEnv = "PARCELA_TEST_CRASH_AT"

// TestCrashChild is not a test: it is `parcela serve` run by
// startKillableServer in a process of its own, which kills itself with
// SIGKILL when an idempotent request reaches the fault point.
func TestCrashChild(t *testing.T) {
	at := sqldb.FaultPoint(os.Getenv(crashChildEnv))
	if at == "" {
		t.Skip("runs only as the child of TestIdempotentRequestsSurviveKill9")
	}
	storeFault = func(_ context.Context, p sqldb.FaultPoint) {
		if p == at {
			// SIGKILL: no deferred function, no flush, no rollback.
			self, err := os.FindProcess(os.Getpid())
			if err == nil {
				err = self.Kill()
			}
			if err != nil {
				panic(fmt.Sprintf("could not kill myself: %v", err))
			}
			select {} // the signal is on its way
		}
	}
	if err := run(context.Background(), []string{"serve"}, os.Getenv, os.Stdout, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// startKillableServer runs `parcela serve` in a child process that kills
// itself at the fault point, and returns its sandbox address and a wait
// that reports how it ended.
func startKillableServer(t *testing.T, dsn string, at sqldb.FaultPoint) (sandbox string, wait func() *os.ProcessState) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+string(at), "PARCELA_DATABASE_URL="+dsn,
		"PARCELA_ADDR=127.0.0.1:0", "PARCELA_SANDBOX_ADDR=127.0.0.1:0", "PARCELA_OPS_ADDR=127.0.0.1:0",
		"PARCELA_SANDBOX_RATE_LIMIT=0", "PARCELA_LOG_LEVEL=error")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan *os.ProcessState, 1)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "sandbox "); ok {
				addr <- a
			}
		}
		_ = cmd.Wait() // its ProcessState says how it ended
		done <- cmd.ProcessState
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // it may have exited meanwhile
		}
	})
	select {
	case sandbox = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatal("the child server printed no address")
	}
	return sandbox, func() *os.ProcessState {
		select {
		case s := <-done:
			return s
		case <-time.After(30 * time.Second):
			t.Fatal("the child server did not die")
			return nil
		}
	}
}

// A real kill -9 between the steps of a POST with an Idempotency-Key, on
// a process of its own: before the commit of the request's writes, and
// after it (before the answer left). The retry on a restarted server runs
// the request for the first time, or replays the committed answer; either
// way there is one order and one charge.
func TestIdempotentRequestsSurviveKill9(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			dsn := sqldbtest.DSN(t, e)
			companyID, _, token := newCompanyToken(t, dsn, "sandbox")
			setupServer := startServer(t, dsn, map[string]string{"PARCELA_SANDBOX_RATE_LIMIT": "0"})
			v1 := setupServer.sandbox + "/external_api/v1"
			post := func(base, path string, body any, key string) (response, error) {
				b, _ := json.Marshal(body)
				req, _ := http.NewRequest("POST", base+"/external_api/v1"+path, strings.NewReader(string(b)))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				if key != "" {
					req.Header.Set("Idempotency-Key", key)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					return response{}, err
				}
				defer res.Body.Close()
				out, _ := io.ReadAll(res.Body)
				return response{res.StatusCode, res.Header, out}, nil
			}
			p := do(t, "POST", v1+"/products", token, strings.NewReader(`{"product": {"name": "Curso", "full_amount_cents": 200000}}`), nil)
			var product struct{ ID string }
			if err := json.Unmarshal(p.body, &product); err != nil || product.ID == "" {
				t.Fatalf("product %d %s", p.status, p.body)
			}
			o := do(t, "POST", v1+"/offers", token, strings.NewReader(`{"offer": {"name": "Turma", "product_id": "`+product.ID+`", "amount_cents": 200000},
				"payment_configurations": [{"payment_type": "financed", "allowed_down_payment_methods": ["pix"], "down_payment_type": "percentage",
				"down_payment_value": 0.2, "max_installments": 12}]}`), nil)
			var offer struct {
				ID     string
				Config []struct{ ID string } `json:"payment_configurations"`
			}
			if err := json.Unmarshal(o.body, &offer); err != nil || len(offer.Config) != 1 {
				t.Fatalf("offer %d %s", o.status, o.body)
			}
			setupServer.stop()
			orderBody := map[string]any{"order": map[string]any{"offer_id": offer.ID, "customer_name": "Ana", "customer_birthdate": "1990-01-01",
				"customer_document": "52998224725", "email": "ana@example.com", "phone": "11987654321",
				"address": map[string]any{"zipcode": "01310100", "street": "Av. Paulista", "number": "1", "neighborhood": "Bela Vista", "city_ibge_code": "3550308"}}}
			chargeBody := map[string]any{"payment_configuration_id": offer.Config[0].ID, "due_day": 5, "installments": 12,
				"payment": map[string]any{"payment_method": "pix"}, "signature": map[string]any{"remote_ip": "203.0.113.9", "user_agent": "test"}}

			// killedAt sends a request to a server that dies at the fault
			// point, and returns the answer of its retry on a restarted one.
			killedAt := func(at sqldb.FaultPoint, path string, body any, key string) response {
				t.Helper()
				child, wait := startKillableServer(t, dsn, at)
				if r, err := post(child, path, body, key); err == nil {
					t.Fatalf("the server answered %d %s instead of dying at %s", r.status, r.body, at)
				}
				if s := wait(); s == nil || !strings.Contains(s.String(), "killed") {
					t.Fatalf("the server ended with %v, not killed at %s", s, at)
				}
				restarted := startServer(t, dsn, map[string]string{"PARCELA_SANDBOX_RATE_LIMIT": "0"})
				defer restarted.stop()
				r, err := post(restarted.sandbox, path, body, key)
				if err != nil {
					t.Fatal(err)
				}
				if replayed := r.header.Get("Idempotent-Replayed") == "true"; replayed != (at == sqldb.AfterCommit) {
					t.Fatalf("killed %s: the retry answered %d replayed=%v %s", at, r.status, replayed, r.body)
				}
				again, err := post(restarted.sandbox, path, body, key)
				if err != nil || string(again.body) != string(r.body) {
					t.Fatalf("the second retry differs: %v\n%s\n%s", err, r.body, again.body)
				}
				return r
			}
			for _, at := range []sqldb.FaultPoint{sqldb.BeforeCommit, sqldb.AfterCommit} {
				key := fmt.Sprintf("%s-%s", at, sqldbtest.Suffix())
				r := killedAt(at, "/orders", orderBody, "order-"+key)
				var order struct{ ID string }
				if err := json.Unmarshal(r.body, &order); err != nil || r.status != 201 || order.ID == "" {
					t.Fatalf("order after %s: %d %s", at, r.status, r.body)
				}
				r = killedAt(at, "/orders/"+order.ID+"/charge", chargeBody, "charge-"+key)
				var charged struct {
					Status   string
					Billings []any
				}
				if err := json.Unmarshal(r.body, &charged); err != nil || r.status != 200 || charged.Status != "in_progress" || len(charged.Billings) != 1 {
					t.Fatalf("charge after %s: %d %s", at, r.status, r.body)
				}
			}
			// One order per order request, one billing per charge.
			db, err := sqldb.Open(context.Background(), dsn, sqldb.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for table, want := range map[string]int{"orders": 2, "billings": 2} {
				var n int
				q := "SELECT COUNT(*) FROM " + table + " WHERE company_id = '" + companyID + "'"
				if err := db.SQLDB().QueryRowContext(context.Background(), q).Scan(&n); err != nil || n != want {
					t.Fatalf("%d %s, want %d: %v", n, table, want, err)
				}
			}
		})
	}
}
