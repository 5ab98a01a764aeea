package server_test

import (
	"context"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"parcela"
	"parcela/api"
	"parcela/jobs"
	"parcela/server"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// An operator's lock_timeout or statement_timeout (on the role, or in the
// URL) ends a write that waited on another session's lock: the client is
// told the write did nothing and to retry, 409 conflict or 503
// unavailable, never a 500 internal error; and the instance stays ready.
func TestLockTimeoutIsNoInternalError(t *testing.T) {
	t.Parallel()
	if os.Getenv("PARCELA_TEST_POSTGRES_URL") == "" {
		t.Skip("PostgreSQL only")
	}
	for _, param := range []string{"lock_timeout", "statement_timeout"} {
		t.Run(param, func(t *testing.T) {
			ctx := context.Background()
			dsn := sqldbtest.DSN(t, sqldb.Postgres)
			clock := parcela.NewTestClock(start)
			enq, err := jobs.NewEnqueuer("webhooks_" + sqldbtest.Suffix())
			if err != nil {
				t.Fatal(err)
			}
			db, err := sqldb.Open(ctx, dsn+"&"+param+"=300ms", sqldb.Config{Clock: clock, Enqueuer: enq})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			b := &bundle{t: t, db: db, enq: enq, app: sqldbtest.Services(db, clock), clock: clock, contract: loadContract(t)}
			b.company = sqldbtest.Company(t, db)
			b.sandbox = httptest.NewServer(server.New(server.ServicesOf(b.app, db), server.Config{Environment: parcela.Sandbox, Clock: clock,
				PublicURL: sqldbtest.Links[parcela.Sandbox].PublicURL, OpenAPI: api.Spec}))
			t.Cleanup(b.sandbox.Close)
			b.token = sqldbtest.Token(t, db, b.company.ID, parcela.Sandbox)
			id := b.product()["id"].(string)

			other, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close(ctx)
			tx, err := other.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "SELECT id FROM products WHERE id = $1 FOR UPDATE", id); err != nil {
				t.Fatal(err)
			}
			r := b.call("PATCH", "/external_api/v1/products/"+id, map[string]any{"product": map[string]any{"name": "Outro nome"}})
			t.Logf("%d %s", r.Status, r.Body)
			if r.Status != 409 && r.Status != 503 {
				t.Fatalf("a write that met the %s answered %d, want 409 or 503: %s", param, r.Status, r.Body)
			}
			// One write's wait is no outage: the instance stays ready (a
			// 503 on /readyz takes it out of its load balancer).
			if err := db.Ready(ctx); err != nil {
				t.Fatalf("not ready after a write met the %s: %v", param, err)
			}
		})
	}
}
