package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"parcela"
	"parcela/api"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// storeFaults is a store's fault hook that a test arms for one request.
type storeFaults struct {
	mu sync.Mutex
	at sqldb.FaultPoint
}

func (f *storeFaults) arm(at sqldb.FaultPoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.at = at
}

// hook dies like the process would, once: the panic unwinds the request
// (rolling back an uncommitted transaction) and the client gets no answer
// of the request's own.
func (f *storeFaults) hook(_ context.Context, at sqldb.FaultPoint) {
	f.mu.Lock()
	hit := f.at == at
	if hit {
		f.at = ""
	}
	f.mu.Unlock()
	if hit {
		panic("killed at " + string(at))
	}
}

// rows counts what a request may create, for the bundle's company.
func (b *bundle) rows(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"products", "offers", "orders", "billings", "webhooks", "events"} {
		var n int
		// Ids are UUIDs the store made: safe to inline, and portable.
		q := "SELECT COUNT(*) FROM " + table + " WHERE company_id = '" + b.company.ID + "'"
		if err := b.db.SQLDB().QueryRowContext(context.Background(), q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// crashCase is one POST: how to prepare it, and what one run of it creates.
type crashCase struct {
	name    string
	status  int
	prepare func(t *testing.T, b *bundle) (path string, body any)
	creates map[string]int
}

const v1 = "/external_api/v1"

func crashCases() []crashCase {
	charged := func(t *testing.T, b *bundle) map[string]any {
		offer, order := b.order()
		_, fin := configs(offer)
		return b.call("POST", v1+"/orders/"+order["id"].(string)+"/charge", chargeBody(fin, "pix", 3)).want(t, 200).JSON(t)
	}
	firstPayment := func(t *testing.T, b *bundle) string {
		return openPayment(t, b.bill(t, billIDs(charged(t, b))[0]))["id"].(string)
	}
	hookBody := map[string]any{"name": "orders", "url": "https://hooks.example.com/parcela", "entity": "order", "events": []string{"in_progress"}, "verb": "post"}
	return []crashCase{
		{"create product", 201, func(*testing.T, *bundle) (string, any) { return v1 + "/products", productBody() }, map[string]int{"products": 1}},
		{"create offer", 201, func(t *testing.T, b *bundle) (string, any) {
			return v1 + "/offers", offerBody(b.product()["id"].(string))
		}, map[string]int{"offers": 1}},
		{"create order", 201, func(t *testing.T, b *bundle) (string, any) {
			return v1 + "/orders", orderBody(b.offer()["id"].(string))
		}, map[string]int{"orders": 1}},
		{"charge", 200, func(t *testing.T, b *bundle) (string, any) {
			offer, order := b.order()
			_, fin := configs(offer)
			return v1 + "/orders/" + order["id"].(string) + "/charge", chargeBody(fin, "boleto", 4)
		}, map[string]int{"billings": 1, "events": 6}},
		{"cancel order", 200, func(t *testing.T, b *bundle) (string, any) {
			return v1 + "/orders/" + charged(t, b)["id"].(string) + "/cancel", nil
		}, map[string]int{"events": 5}},
		{"cancel billing", 200, func(t *testing.T, b *bundle) (string, any) {
			billing := charged(t, b)["billings"].([]any)[0].(map[string]any)["id"].(string)
			return v1 + "/billings/" + billing + "/cancel", map[string]any{"cancelation_reason": "refunded_by_company"}
		}, map[string]int{"events": 5}},
		{"sandbox pay", 200, func(t *testing.T, b *bundle) (string, any) {
			return v1 + "/sandbox/payments/" + firstPayment(t, b) + "/pay", nil
		}, map[string]int{"events": 2}},
		{"sandbox expire", 200, func(t *testing.T, b *bundle) (string, any) {
			return v1 + "/sandbox/payments/" + firstPayment(t, b) + "/expire", nil
		}, map[string]int{"events": 5}},
		{"create webhook", 201, func(*testing.T, *bundle) (string, any) { return v1 + "/webhooks", hookBody }, map[string]int{"webhooks": 1}},
		{"rotate secret", 200, func(t *testing.T, b *bundle) (string, any) {
			h := b.call("POST", v1+"/webhooks", hookBody).want(t, 201).JSON(t)
			return v1 + "/webhooks/" + h["id"].(string) + "/rotate_secret", nil
		}, nil},
		{"retry delivery", 200, func(t *testing.T, b *bundle) (string, any) {
			h := b.call("POST", v1+"/webhooks", hookBody).want(t, 201).JSON(t)
			charged(t, b)
			ds := b.call("GET", v1+"/webhook_deliveries?webhook_id="+h["id"].(string), nil).want(t, 200).JSON(t)
			return v1 + "/webhook_deliveries/" + ds["results"].([]any)[0].(map[string]any)["id"].(string) + "/retry", nil
		}, nil},
	}
}

// Killing the server between the steps of a POST with an Idempotency-Key,
// on every POST route: a crash before the commit leaves nothing, and the
// retry runs the request for the first time; a crash after the commit
// (before the client had its answer) leaves the request and its response,
// and the retry replays it. Either way the request took effect once, and
// every later retry gets the same bytes.
func TestIdempotentRequestsSurviveACrash(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			f := &storeFaults{}
			b := setup(t, e, func(c *sqldb.Config) { c.Fault = f.hook })
			for _, tt := range crashCases() {
				for _, at := range []sqldb.FaultPoint{sqldb.BeforeCommit, sqldb.AfterCommit} {
					t.Run(fmt.Sprintf("%s/%s", tt.name, at), func(t *testing.T) {
						b.t = t
						path, body := tt.prepare(t, b)
						key := map[string]string{"Idempotency-Key": "crash-" + sqldbtest.Suffix()}
						before := b.rows(t)

						f.arm(at)
						b.send(b.sandbox.URL, b.token, "POST", path, body, key).want(t, http.StatusInternalServerError)
						f.arm("")
						crashed := b.rows(t)
						if at == sqldb.BeforeCommit && fmt.Sprint(crashed) != fmt.Sprint(before) {
							t.Fatalf("a crash before the commit kept writes: %v, was %v", crashed, before)
						}

						retry := b.send(b.sandbox.URL, b.token, "POST", path, body, key).want(t, tt.status)
						replayed := retry.Header.Get("Idempotent-Replayed") == "true"
						if replayed != (at == sqldb.AfterCommit) {
							t.Fatalf("after a crash %s the retry was replayed=%v", at, replayed)
						}
						again := b.send(b.sandbox.URL, b.token, "POST", path, body, key).want(t, tt.status)
						if string(again.Body) != string(retry.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
							t.Fatalf("the replay differs:\n%s\n%s", retry.Body, again.Body)
						}
						after := b.rows(t)
						for table, n := range after {
							if n-before[table] != tt.creates[table] {
								t.Errorf("%s: %d rows made, want %d", table, n-before[table], tt.creates[table])
							}
						}
					})
				}
			}
		})
	}
}

// Two instances on one database, one Idempotency-Key sent to both at once:
// the charge happens once, and every answer is that charge's 200, byte for
// byte, or 409 while the first is in flight on the same instance; never the
// 409 invalid_state a second run of the charge would meet.
func TestIdempotencyAcrossInstances(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.skipContract = true // answers are checked below; the sends run concurrently
		other := b.otherInstance(t)
		for round := range 5 {
			offer, order := b.order()
			_, fin := configs(offer)
			path := v1 + "/orders/" + order["id"].(string) + "/charge"
			key := map[string]string{"Idempotency-Key": fmt.Sprintf("twice-%d-%s", round, sqldbtest.Suffix())}
			var wg sync.WaitGroup
			answers := make([]resp, 8)
			for i := range answers {
				base := b.sandbox.URL
				if i%2 == 1 {
					base = other.URL
				}
				wg.Go(func() { answers[i] = b.send(base, b.token, "POST", path, chargeBody(fin, "pix", 3), key) })
			}
			wg.Wait()
			var charged string
			for _, r := range answers {
				switch {
				case r.Status == 200 && (charged == "" || charged == string(r.Body)):
					charged = string(r.Body)
				case r.Status == 409 && r.JSON(t)["code"] == "idempotency_in_flight":
				default:
					t.Fatalf("answer %d %s (first charge %s)", r.Status, r.Body, charged)
				}
			}
			got := b.call("GET", v1+"/orders/"+order["id"].(string), nil).want(t, 200).JSON(t)
			if n := len(got["billings"].([]any)); n != 1 || charged == "" {
				t.Fatalf("%d billings; charged %q", n, charged)
			}
			again := b.send(other.URL, b.token, "POST", path, chargeBody(fin, "pix", 3), key).want(t, 200)
			if string(again.Body) != charged {
				t.Fatalf("the replay differs from the charge")
			}
		}
	})
}

// stormStore is the store, except that its next storms changes conflict,
// as under a storm of concurrent requests on one order.
type stormStore struct {
	*sqldb.DB
	storms atomic.Int32
}

func (s *stormStore) Apply(ctx context.Context, c *parcela.Change) error {
	if s.storms.Add(-1) >= 0 {
		return &parcela.Conflict{Entity: "order", ID: "storm"}
	}
	return s.DB.Apply(ctx, c)
}

// A request that gave up because concurrent requests kept moving its order
// did nothing, and its answer says to retry: a retry under the same
// Idempotency-Key runs it for real instead of replaying that answer.
func TestIdempotentRetryAfterAStormRuns(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		store := &stormStore{DB: b.db}
		app := parcela.NewServices(store, b.app.Provider, nil, b.clock, sqldbtest.Links)
		srv := httptest.NewServer(server.New(server.ServicesOf(app, b.db), server.Config{Environment: parcela.Sandbox, Clock: b.clock,
			PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}))
		t.Cleanup(srv.Close)
		_, order := b.order()
		path := v1 + "/orders/" + order["id"].(string) + "/cancel"
		key := map[string]string{"Idempotency-Key": "storm-" + sqldbtest.Suffix()}
		store.storms.Store(1 << 10)
		first := b.send(srv.URL, b.token, "POST", path, nil, key).want(t, 409)
		if code := first.JSON(t)["code"]; code != "conflict" {
			t.Fatalf("a request that lost every round: %s %s", code, first.Body)
		}
		store.storms.Store(0)
		again := b.send(srv.URL, b.token, "POST", path, nil, key).want(t, 200)
		if again.Header.Get("Idempotent-Replayed") != "" || again.JSON(t)["status"] != "canceled" {
			t.Fatalf("the retry: %s %s", again.Header.Get("Idempotent-Replayed"), again.Body)
		}
		if replay := b.send(srv.URL, b.token, "POST", path, nil, key).want(t, 200); string(replay.Body) != string(again.Body) {
			t.Fatalf("the replay differs from the retry that ran")
		}
	})
}

// A problem replayed for an Idempotency-Key is the first answer as it was
// stored: its request_id names the first request, the one that did the
// work, and its X-Request-Id the retry (send checks both as the document
// says).
func TestReplayedProblemNamesTheFirstRequest(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		key := map[string]string{"Idempotency-Key": "replayed-problem-" + sqldbtest.Suffix()}
		body := map[string]any{"product": map[string]any{"name": "Curso", "full_amount_cents": 0}}
		first := b.send(b.sandbox.URL, b.token, "POST", v1+"/products", body, key).want(t, 422)
		again := b.send(b.sandbox.URL, b.token, "POST", v1+"/products", body, key).want(t, 422)
		if string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the replay %s %s differs from %s", again.Header.Get("Idempotent-Replayed"), again.Body, first.Body)
		}
		if id := again.JSON(t)["request_id"]; id != first.Header.Get("X-Request-Id") || id == again.Header.Get("X-Request-Id") {
			t.Errorf("the replay's request_id %v; the first's X-Request-Id %s, the replay's %s", id, first.Header.Get("X-Request-Id"), again.Header.Get("X-Request-Id"))
		}
	})
}

// Two instances on one database, one Idempotency-Key sent to both at once
// with a webhook's DELETE or PATCH: the write happens once, and every
// answer is its 204 or 200, or 409 idempotency_in_flight while its answer
// is still to come; never the 404 of a DELETE that found the webhook
// deleted by the other, which was stored as the key's answer and replayed
// to every retry after.
func TestIdempotentPatchAndDeleteAcrossInstances(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.skipContract = true // answers are checked below; the sends run concurrently
		other := b.otherInstance(t)
		for round := range 20 {
			h := b.hook(t, "https://hooks.example.com/parcela", "order", "in_progress")
			path := v1 + "/webhooks/" + h["id"].(string)
			for _, method := range []string{"PATCH", "DELETE"} {
				var body any
				want := 204
				if method == "PATCH" {
					body, want = map[string]any{"name": fmt.Sprintf("renamed %d", round)}, 200
				}
				key := map[string]string{"Idempotency-Key": fmt.Sprintf("%s-%d-%s", method, round, sqldbtest.Suffix())}
				var wg sync.WaitGroup
				answers := make([]resp, 2)
				for i, base := range []string{b.sandbox.URL, other.URL} {
					wg.Go(func() { answers[i] = b.send(base, b.token, method, path, body, key) })
				}
				wg.Wait()
				var first *resp
				for _, r := range answers {
					switch {
					case r.Status == want && (first == nil || string(first.Body) == string(r.Body)):
						first = &r
					case r.Status == 409 && r.JSON(t)["code"] == "idempotency_in_flight":
					default:
						t.Fatalf("round %d, %s: answer %d %s", round, method, r.Status, r.Body)
					}
				}
				again := b.send(other.URL, b.token, method, path, body, key)
				if again.Status != want || (first != nil && string(again.Body) != string(first.Body)) {
					t.Fatalf("round %d, %s: the retry got %d %s", round, method, again.Status, again.Body)
				}
			}
		}
	})
}

// One POST with an Idempotency-Key sent at once on four connections, two
// to each of two instances sharing the database, round after round, for
// the routes that move money or an order: it takes effect once (the rows
// and events it creates counted), every answer that is not 409
// idempotency_in_flight is the first answer byte for byte, and a retry
// after them replays it.
func TestIdempotentPostsAtOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.skipContract = true // answers are checked below; the sends run concurrently
		other := b.otherInstance(t)
		for _, c := range crashCases() {
			switch c.name {
			case "create order", "charge", "cancel order", "cancel billing", "sandbox pay", "sandbox expire":
			default:
				continue
			}
			for round := range 8 {
				path, body := c.prepare(t, b)
				before := b.rows(t)
				key := map[string]string{"Idempotency-Key": fmt.Sprintf("atonce-%d-%s", round, sqldbtest.Suffix())}
				answers := make([]resp, 4)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range answers {
					base := b.sandbox.URL
					if i%2 == 1 {
						base = other.URL
					}
					wg.Go(func() {
						<-start
						answers[i] = b.send(base, b.token, "POST", path, body, key)
					})
				}
				close(start)
				wg.Wait()
				var first string
				for _, r := range answers {
					switch {
					case r.Status == c.status && (first == "" || first == string(r.Body)):
						first = string(r.Body)
					case r.Status == 409 && r.JSON(t)["code"] == "idempotency_in_flight":
					default:
						t.Fatalf("%s, round %d: answer %d %s (first %s)", c.name, round, r.Status, r.Body, first)
					}
				}
				again := b.send(other.URL, b.token, "POST", path, body, key)
				if again.Status != c.status || (first != "" && string(again.Body) != first) {
					t.Fatalf("%s, round %d: the retry got %d %s, first %s", c.name, round, again.Status, again.Body, first)
				}
				after := b.rows(t)
				for table, n := range after {
					if n-before[table] != c.creates[table] {
						t.Fatalf("%s, round %d: %d %s created, want %d", c.name, round, n-before[table], table, c.creates[table])
					}
				}
			}
		}
	})
}
