package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"parcela/sqldb/sqldbtest"
)

// `token revoke` takes its id before or after the flags: every other
// command takes --database first, and `token revoke --database URL ID`,
// typed to revoke a leaked token, was refused with "want a token id".
func TestTokenRevokeTakesItsIDBeforeOrAfterTheFlags(t *testing.T) {
	t.Parallel()
	dsn := filepath.Join(t.TempDir(), "p.db")
	cli(t, dsn, "migrate")
	company, first, _ := newCompanyToken(t, dsn, "sandbox")
	second := strings.Fields(cli(t, dsn, "token", "create", "--company", company, "--environment", "sandbox"))[1]
	cli(t, dsn, "token", "revoke", first, "--database", dsn)
	cli(t, dsn, "token", "revoke", "--database", dsn, second)
	listed := cli(t, dsn, "token", "list", "--company", company)
	for _, id := range []string{first, second} {
		for _, line := range strings.Split(listed, "\n") {
			if strings.HasPrefix(line, id) && strings.HasSuffix(strings.TrimSpace(line), "-") {
				t.Errorf("token %s not revoked: %q", id, line)
			}
		}
	}
}

// `token list` for a company id that is not there (mistyped, or another
// database's) says so, as `token create` does: it printed the header of an
// empty table and exited 0, an operator checking a company's tokens after
// a leak told that it had none.
func TestTokenListOfAMissingCompanyIsRefused(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			dsn := sqldbtest.DSN(t, e)
			company, _, _ := newCompanyToken(t, dsn, "sandbox")
			if !strings.Contains(cli(t, dsn, "token", "list", "--company", company), "sandbox") {
				t.Error("the company's token is not listed")
			}
			var out bytes.Buffer
			err := run(context.Background(), []string{"token", "list", "--company", company + "x"}, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &bytes.Buffer{})
			if err == nil || errorLine(err) != "company not found" {
				t.Errorf("token list of a missing company: %v, printed %q", err, out.String())
			}
		})
	}
}
