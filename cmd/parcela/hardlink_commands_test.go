package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands that run beside a server (migrate, company, token, demo)
// open the SQLite file by the name they are given: by a second hard link
// to the file a server serves, SQLite keeps a second log (-wal, -shm named
// after that path) for the one file, which corrupts it (the index of
// companies "wrong # of entries" after a few company creates under
// traffic; an audit). serve refuses such a file, and so do the commands.
func TestCommandsByASecondHardLinkAreRefused(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	path := strings.TrimPrefix(dsn, "sqlite:")
	cli(t, dsn, "migrate")
	link := filepath.Join(t.TempDir(), "linked.db")
	if err := os.Link(path, link); err != nil {
		t.Skipf("no hard link here: %v", err)
	}
	for _, args := range [][]string{
		{"migrate"},
		{"company", "create", "--name", "Escola Link", "--document", "11222333000181", "--slug", "escola-link"},
		{"company", "list"},
	} {
		var out, errOut strings.Builder
		getenv := func(k string) string {
			if k == "PARCELA_DATABASE_URL" {
				return "sqlite:" + link
			}
			return ""
		}
		err := run(context.Background(), args, getenv, &out, &errOut)
		if err == nil || !strings.Contains(errorLine(err), "hard links") {
			t.Errorf("%v by a second hard link: %v (out %q)", args, err, out.String())
		}
	}
	if _, err := os.Stat(link + "-wal"); err == nil {
		t.Errorf("a command opened the database by the link: %s-wal exists", link)
	}
}
