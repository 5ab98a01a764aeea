package main

import (
	"path/filepath"
	"strings"
	"testing"
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
