package sqldb

import (
	"context"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"parcela"
)

// A server that refuses the connection itself (its database dropped or
// renamed, the role's password rotated, the role removed) is an outage
// as much as a server that does not answer: 503 unavailable with
// Retry-After, and /readyz's write health, not a 500 internal error.
func TestConnectionRefusedByTheServerIsUnavailable(t *testing.T) {
	t.Parallel()
	pg, ok := testDSNs(t)[Postgres]
	if !ok {
		t.Skip("PARCELA_TEST_POSTGRES_URL is not set")
	}
	for name, change := range map[string]func(u *url.URL){
		"database gone":  func(u *url.URL) { u.Path = "/no_such_database_audit" },
		"role not there": func(u *url.URL) { u.User = url.User("no_such_role_audit") },
	} {
		u, err := url.Parse(pg)
		if err != nil {
			t.Fatal(err)
		}
		change(u)
		_, err = pgconn.Connect(context.Background(), u.String())
		if err == nil {
			t.Fatalf("%s: connected", name)
		}
		if got := failed("read token", err); parcela.ErrorCode(got) != parcela.EUNAVAILABLE {
			t.Errorf("%s: %v became %v (code %s)", name, err, got, parcela.ErrorCode(got))
		}
	}
}
