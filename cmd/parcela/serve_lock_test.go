package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A second `parcela serve` on the SQLite file one serves is refused at its
// start, naming the file and the process that serves it: both ran, each
// keeping its own rate limits, sweeps and group-commit writer as if it
// were the only one. The commands that are safe beside a server (migrate,
// company, token) still run, and once the first stops the file can be
// served again (a killed one's lock goes with its process:
// TestIdempotentRequestsSurviveKill9 restarts after kill -9).
func TestSecondServeOnOneSQLiteFileIsRefused(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	path := strings.TrimPrefix(dsn, "sqlite:")
	first := startServer(t, dsn, nil)

	vars := map[string]string{"PARCELA_DATABASE_URL": dsn, "PARCELA_ADDR": "127.0.0.1:0",
		"PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"}
	// By a relative path too: the same file is the same lock.
	dir, name := filepath.Split(path)
	for _, database := range []string{dsn, "sqlite:" + dir + "./" + name} {
		vars["PARCELA_DATABASE_URL"] = database
		out := &syncBuffer{}
		err := runBriefly(t, []string{"serve"}, vars, out)
		if err == nil {
			t.Fatalf("a second serve on %s started:\n%s", database, out)
		}
		for _, want := range []string{path, fmt.Sprintf("pid %d", os.Getpid()), "another parcela serve"} {
			if !strings.Contains(errorLine(err), want) {
				t.Errorf("the refusal %q does not name %q", errorLine(err), want)
			}
		}
		if strings.Contains(out.String(), "production http://") {
			t.Errorf("the refused start served:\n%s", out)
		}
	}

	// Safe beside the server: they take no lock.
	cli(t, dsn, "migrate")
	newCompanyToken(t, dsn, "sandbox")
	if list := cli(t, dsn, "company", "list"); !strings.Contains(list, "escola-") {
		t.Fatalf("company list beside the server:\n%s", list)
	}

	first.stop()
	startServer(t, dsn, nil).stop()
}

// runBriefly runs a command that should stop on its own; one still running
// after it printed its listeners, or after 20 s, is stopped and returns nil.
func runBriefly(t *testing.T, args []string, vars map[string]string, out *syncBuffer) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, env(vars), out, &syncBuffer{}) }()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-done:
			return err
		case <-deadline:
			cancel()
			if err := <-done; err != nil {
				t.Logf("stopped: %v", err)
			}
			return nil
		case <-time.After(10 * time.Millisecond):
			if strings.Contains(out.String(), "operations http://") {
				cancel()
				if err := <-done; err != nil {
					t.Logf("stopped: %v", err)
				}
				return nil
			}
		}
	}
}

// A hard link to the SQLite file one serves is the same database under
// another name: SQLite would keep a second log beside it (-wal and -shm
// are named after the path), and the lock beside the name is another
// file. Its start was served; it is refused, naming why.
func TestServeByASecondHardLinkIsRefused(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	path := strings.TrimPrefix(dsn, "sqlite:")
	first := startServer(t, dsn, nil)
	defer first.stop()
	link := filepath.Join(t.TempDir(), "linked.db")
	if err := os.Link(path, link); err != nil {
		t.Skipf("no hard link here: %v", err)
	}
	vars := map[string]string{"PARCELA_DATABASE_URL": "sqlite:" + link, "PARCELA_ADDR": "127.0.0.1:0",
		"PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"}
	out := &syncBuffer{}
	err := runBriefly(t, []string{"serve"}, vars, out)
	if err == nil || !strings.Contains(errorLine(err), "2 hard links") {
		t.Fatalf("a serve by a second hard link: %v\n%s", err, out)
	}
	if _, err := os.Stat(link + "-wal"); err == nil {
		t.Errorf("the refused start opened the database by the link: %s-wal exists", link)
	}
}
