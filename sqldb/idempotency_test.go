package sqldb_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clock := parcela.NewTestClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
			db := sqldbtest.Open(t, e, sqldb.Config{Clock: clock})
			c := sqldbtest.Company(t, db)
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}

			if r, err := db.IdempotentResponse(ctx, a, "k1"); r != nil || err != nil {
				t.Fatalf("unused key: %v %v", r, err)
			}
			first := parcela.IdempotentResponse{RequestHash: "h1", Status: 422, Body: []byte(`{"code":"validation_failed"}`)}
			if r, err := db.StoreIdempotentResponse(ctx, a, "k1", first); r != nil || err != nil {
				t.Fatalf("store: %v %v", r, err)
			}
			r, err := db.IdempotentResponse(ctx, a, "k1")
			if err != nil || r == nil || r.RequestHash != "h1" || r.Status != 422 || string(r.Body) != string(first.Body) {
				t.Fatalf("replay: %+v %v", r, err)
			}
			// A second response under the key keeps the first.
			r, err = db.StoreIdempotentResponse(ctx, a, "k1", parcela.IdempotentResponse{RequestHash: "h2", Status: 201, Body: []byte(`{}`)})
			if err != nil || r == nil || r.RequestHash != "h1" || r.Status != 422 {
				t.Fatalf("second store: %+v %v", r, err)
			}
			// Keys are per company and environment.
			other := parcela.Auth{CompanyID: c.ID, Environment: parcela.Production}
			if r, err := db.IdempotentResponse(ctx, other, "k1"); r != nil || err != nil {
				t.Fatalf("other environment: %v %v", r, err)
			}
			otherCompany := parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}
			if r, err := db.StoreIdempotentResponse(ctx, otherCompany, "k1", first); r != nil || err != nil {
				t.Fatalf("other company: %v %v", r, err)
			}
			// After 24 hours the record is gone, and the key is free again.
			clock.Advance(sqldb.IdempotencyTTL + time.Second)
			if r, err := db.IdempotentResponse(ctx, a, "k1"); r != nil || err != nil {
				t.Fatalf("expired key: %v %v", r, err)
			}
			if r, err := db.StoreIdempotentResponse(ctx, a, "k1", parcela.IdempotentResponse{RequestHash: "h3", Status: 201}); r != nil || err != nil {
				t.Fatalf("store after expiry: %v %v", r, err)
			}
			n, err := db.DeleteExpiredIdempotencyKeys(ctx)
			if err != nil || n != 1 {
				t.Fatalf("cleanup deleted %d, want the other company's: %v", n, err)
			}
		})
	}
}

// faults is a store's fault hook that a test arms for one step.
type faults struct {
	mu  sync.Mutex
	at  sqldb.FaultPoint
	act func()
}

func (f *faults) arm(at sqldb.FaultPoint, act func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.at, f.act = at, act
}

func (f *faults) hook(_ context.Context, at sqldb.FaultPoint) {
	f.mu.Lock()
	act := f.act
	if at != f.at {
		act = nil
	}
	f.mu.Unlock()
	if act != nil {
		act()
	}
}

// idempotentCreate creates a product as a request with Idempotency-Key key
// would, and returns what the request would answer: the response committed
// with its writes, or nil.
func idempotentCreate(ctx context.Context, app *parcela.Services, a parcela.Auth, key string) (_ *parcela.IdempotentResponse, err error) {
	req := &parcela.IdempotentRequest{Auth: a, Key: key, RequestHash: "create " + key,
		Render: func(result any) (int, []byte, error) {
			b, err := json.Marshal(parcela.NewProductCreateForm(result.(*parcela.Product)))
			return 201, b, err
		}}
	in := parcela.ProductInput{Name: new("Curso"), FullAmountCents: new(int64(150000))}
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("crashed")
		}
	}()
	_, err = app.Catalog.CreateProduct(parcela.WithIdempotentRequest(ctx, req), a, in)
	return req.Stored(), err
}

// A request's writes and the response its retry replays commit in one
// transaction: whatever step it dies at, the store holds both or neither.
func TestIdempotentResponseCommitsWithTheWrites(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := &faults{}
			db := sqldbtest.Open(t, e, sqldb.Config{Fault: f.hook})
			app := sqldbtest.Services(db, nil)
			products := func(a parcela.Auth) int {
				t.Helper()
				_, n, err := app.Catalog.Products(ctx, a, parcela.Page{Page: 1, PerPage: 10})
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			const (
				neither = "neither"
				both    = "both"
				either  = "either"
			)
			tests := []struct {
				name  string
				at    sqldb.FaultPoint
				crash func(cancel context.CancelFunc)
				left  string // what the crash leaves committed
			}{
				{"crash before the commit", sqldb.BeforeCommit, func(context.CancelFunc) { panic("killed") }, neither},
				// A commit under a canceled context may or may not get through.
				{"client gone before the commit", sqldb.BeforeCommit, func(cancel context.CancelFunc) { cancel() }, either},
				{"crash after the commit", sqldb.AfterCommit, func(context.CancelFunc) { panic("killed") }, both},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					a := parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}
					reqCtx, cancel := context.WithCancel(ctx)
					defer cancel()
					f.arm(tt.at, func() { tt.crash(cancel) })
					got, err := idempotentCreate(reqCtx, app, a, "k")
					f.arm("", nil)
					if err == nil && got == nil {
						t.Fatal("the request succeeded without storing its response")
					}
					stored, serr := db.IdempotentResponse(ctx, a, "k")
					if serr != nil {
						t.Fatal(serr)
					}
					n := products(a)
					if (stored != nil) != (n == 1) || n > 1 {
						t.Fatalf("after the crash: %d products, stored response %v", n, stored)
					}
					if (tt.left == both && stored == nil) || (tt.left == neither && stored != nil) {
						t.Fatalf("the crash left %v, want %s", stored, tt.left)
					}
					// The retry: a stored response is replayed, else the request runs once.
					if stored == nil {
						if stored, err = idempotentCreate(ctx, app, a, "k"); err != nil || stored == nil {
							t.Fatalf("retry: %v %v", stored, err)
						}
					}
					if n := products(a); n != 1 {
						t.Fatalf("%d products after the retry", n)
					}
					var p map[string]any
					if err := json.Unmarshal(stored.Body, &p); err != nil || stored.Status != 201 || p["name"] != "Curso" {
						t.Fatalf("stored response %d %s: %v", stored.Status, stored.Body, err)
					}
				})
			}

			// Two instances run the same key at once: the second to commit
			// keeps nothing and is told the key is taken.
			a := parcela.Auth{CompanyID: sqldbtest.Company(t, db).ID, Environment: parcela.Sandbox}
			if _, err := idempotentCreate(ctx, app, a, "twice"); err != nil {
				t.Fatal(err)
			}
			if got, err := idempotentCreate(ctx, app, a, "twice"); !errors.Is(err, parcela.ErrIdempotencyKeyTaken) || got != nil {
				t.Fatalf("second commit under one key: %v %v", got, err)
			}
			if n := products(a); n != 1 {
				t.Fatalf("%d products under one key", n)
			}
		})
	}
}

// A PATCH's or a DELETE's write claims its key: while the claim waits for
// its answer the key is taken (another request with it stores nothing),
// the answer replaces the claim, a 5xx leaves it unanswered, and so does
// a minute without an answer (a crash): an unanswered key says its write
// committed, and the answer its retry reads back replaces it.
func TestIdempotencyClaims(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db, clock, a := hookStore(t, e)
			deleted := func(key string) *parcela.IdempotentRequest { return claimedDelete(t, db, clock, a, key) }
			ctx := context.Background()
			taken := func(key string) {
				t.Helper()
				if r, err := db.IdempotentResponse(ctx, a, key); r != nil || !errors.Is(err, parcela.ErrIdempotencyKeyTaken) {
					t.Fatalf("a claimed key read: %v, %v", r, err)
				}
			}
			req := deleted("answered")
			taken("answered")
			if r, err := db.StoreIdempotentResponse(ctx, a, "answered", parcela.IdempotentResponse{RequestHash: "h", Status: 404}); r != nil || !errors.Is(err, parcela.ErrIdempotencyKeyTaken) {
				t.Fatalf("another request's answer over a claim: %v, %v", r, err)
			}
			claimed := parcela.WithIdempotentRequest(ctx, req)
			if r, err := db.StoreIdempotentResponse(claimed, a, "answered", parcela.IdempotentResponse{RequestHash: "h", Status: 204}); r != nil || err != nil {
				t.Fatalf("the claim's answer: %v, %v", r, err)
			}
			if r, err := db.IdempotentResponse(ctx, a, "answered"); err != nil || r == nil || r.Status != 204 {
				t.Fatalf("the answer stored: %+v, %v", r, err)
			}

			req = deleted("failed")
			if r, err := db.StoreIdempotentResponse(parcela.WithIdempotentRequest(ctx, req), a, "failed", parcela.IdempotentResponse{RequestHash: "h", Status: 500}); r != nil || err != nil {
				t.Fatalf("the claim's 5xx: %v, %v", r, err)
			}
			unanswered := func(key string) {
				t.Helper()
				if r, err := db.IdempotentResponse(ctx, a, key); err != nil || r == nil || !r.Unanswered || r.RequestHash != "h" || r.Status != 0 || len(r.Body) != 0 {
					t.Fatalf("key %s: %+v, %v, want unanswered", key, r, err)
				}
			}
			unanswered("failed")
			if r, err := db.StoreIdempotentResponse(ctx, a, "failed", parcela.IdempotentResponse{RequestHash: "h", Status: 404}); err != nil || r == nil || !r.Unanswered {
				t.Fatalf("an answer not read back, over an unanswered key (a second run's): %+v, %v", r, err)
			}
			if r, err := db.StoreIdempotentResponse(ctx, a, "failed", parcela.IdempotentResponse{RequestHash: "h", Status: 204, ReadBack: true}); r != nil || err != nil {
				t.Fatalf("the answer read back over an unanswered key: %v, %v", r, err)
			}
			if r, err := db.IdempotentResponse(ctx, a, "failed"); err != nil || r == nil || r.Unanswered || r.Status != 204 {
				t.Fatalf("the answer read back, stored: %+v, %v", r, err)
			}

			deleted("crashed")
			clock.Advance(59 * time.Second)
			taken("crashed")
			clock.Advance(time.Second)
			unanswered("crashed")
			if r, err := db.StoreIdempotentResponse(ctx, a, "crashed", parcela.IdempotentResponse{RequestHash: "h", Status: 204, ReadBack: true}); r != nil || err != nil {
				t.Fatalf("an answer over a spent claim: %v, %v", r, err)
			}
			if r, err := db.IdempotentResponse(ctx, a, "crashed"); err != nil || r == nil || r.Unanswered || r.Status != 204 {
				t.Fatalf("the answer over a spent claim, stored: %+v, %v", r, err)
			}
		})
	}
}

// An unanswered key is replaced only by its own request's answer read
// back: another request's answer under the key (one whose read of the key
// came before the claim committed, on another instance) is refused, not
// stored over the record of a write that committed, whose own retry was
// then told 422, "used with a different request".
func TestIdempotencyUnansweredKeyIsNotTakenByAnotherRequest(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db, clock, a := hookStore(t, e)
			ctx := context.Background()
			unansweredDelete(t, db, clock, a, "k")
			for _, readBack := range []bool{false, true} {
				first, err := db.StoreIdempotentResponse(ctx, a, "k", parcela.IdempotentResponse{RequestHash: "other", Status: 400, Body: []byte(`{}`), ReadBack: readBack})
				if err != nil || first == nil || first.RequestHash != "h" || !first.Unanswered {
					t.Fatalf("another request's answer (read back: %v) over an unanswered key: first %+v, %v", readBack, first, err)
				}
			}
			r, err := db.IdempotentResponse(ctx, a, "k")
			if err != nil || r == nil || r.RequestHash != "h" || !r.Unanswered {
				t.Fatalf("another request's answer replaced the unanswered claim of a committed write: now %+v, %v", r, err)
			}
		})
	}
}

// claimedDelete deletes a new webhook as a DELETE sent with key (request
// hash "h") does, its write committing a claim on the key, and returns the
// request.
func claimedDelete(t *testing.T, db *sqldb.DB, clock *parcela.TestClock, a parcela.Auth, key string) *parcela.IdempotentRequest {
	t.Helper()
	h, err := sqldbtest.Services(db, clock).Webhooks.CreateWebhook(context.Background(), a, fromJSON[parcela.WebhookRequest](t,
		`{"name": "h", "url": "https://example.com/hook", "verb": "POST", "entity": "bill", "events": ["pending"]}`))
	if err != nil {
		t.Fatal(err)
	}
	req := &parcela.IdempotentRequest{Auth: a, Key: key, RequestHash: "h", AfterCommit: true}
	if err := db.DeleteWebhook(parcela.WithIdempotentRequest(context.Background(), req), a, h.ID, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if req.Claim() == "" {
		t.Fatal("the DELETE committed no claim")
	}
	return req
}

// unansweredDelete is claimedDelete whose answer then failed (a 5xx over
// the claim): the key is unanswered at once.
func unansweredDelete(t *testing.T, db *sqldb.DB, clock *parcela.TestClock, a parcela.Auth, key string) {
	t.Helper()
	req := claimedDelete(t, db, clock, a, key)
	if _, err := db.StoreIdempotentResponse(parcela.WithIdempotentRequest(context.Background(), req), a, key,
		parcela.IdempotentResponse{RequestHash: "h", Status: 500}); err != nil {
		t.Fatal(err)
	}
}

// An unanswered key says its write committed: a second run of the same
// request's write (a duplicate on another instance whose read of the key
// came before the first's claim committed) is refused its claim, and its
// write rolls back. It claimed over the unanswered record and applied the
// write again, over any change made since.
func TestIdempotencyUnansweredKeyIsNotClaimedAgain(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			db, clock, a := hookStore(t, e)
			ctx := context.Background()
			unansweredDelete(t, db, clock, a, "k")
			h, err := sqldbtest.Services(db, clock).Webhooks.CreateWebhook(ctx, a, fromJSON[parcela.WebhookRequest](t,
				`{"name": "h2", "url": "https://example.com/hook2", "verb": "POST", "entity": "bill", "events": ["pending"]}`))
			if err != nil {
				t.Fatal(err)
			}
			again := &parcela.IdempotentRequest{Auth: a, Key: "k", RequestHash: "h", AfterCommit: true}
			err = db.DeleteWebhook(parcela.WithIdempotentRequest(ctx, again), a, h.ID, clock.Now())
			if !errors.Is(err, parcela.ErrIdempotencyKeyTaken) {
				t.Fatalf("a second run of the write over an unanswered key: %v (claim %q), want ErrIdempotencyKeyTaken", err, again.Claim())
			}
		})
	}
}
