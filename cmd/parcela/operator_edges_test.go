package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// A public address set to nothing (a secret that did not reach the
// deployment) stops serve: taken as unset, the offer, checkout and image
// links, which the API answers, stores and sends in webhooks, named the
// listener's own address (an audit). Not parallel: it replaces environ.
func TestEmptyPublicURLIsRefused(t *testing.T) {
	for _, name := range []string{"PARCELA_PUBLIC_URL", "PARCELA_SANDBOX_PUBLIC_URL"} {
		environ = func() []string { return []string{name + "="} }
		t.Cleanup(func() { environ = os.Environ })
		err := run(context.Background(), []string{"serve"}, env(map[string]string{"PARCELA_DATABASE_URL": tempDSN(t),
			"PARCELA_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"}), &syncBuffer{}, &syncBuffer{})
		if err == nil || !strings.Contains(err.Error(), name+" is set but empty") || exitCode(err) != 2 {
			t.Errorf("%s set but empty: %v", name, err)
		}
	}
}

// A PostgreSQL address under a name parcela does not read (DATABASE_URL,
// which platforms set; PARCELA_DB_URL), or a SQLite file's under a
// PARCELA_ name (a later audit), stops every command, which took the
// default ./parcela.db: company create registered the company in a new
// file nobody served, and serve ran on it (an audit). The address, which
// holds a password, is not repeated. Not parallel: it replaces environ and
// the working directory.
func TestDatabaseAddressUnderAnotherNameIsRefused(t *testing.T) {
	for _, kv := range []string{"DATABASE_URL=postgres://parcela:hunter2@db.internal/parcela", "PARCELA_DB_URL=postgresql://parcela:hunter2@db.internal/parcela",
		"PARCELA_DB_URL=/data/parcela.db", "PARCELA_DATABASE=sqlite:/data/parcela.sqlite3"} {
		name, _, _ := strings.Cut(kv, "=")
		dir := t.TempDir()
		t.Chdir(dir)
		environ = func() []string { return []string{kv} }
		t.Cleanup(func() { environ = os.Environ })
		for _, args := range [][]string{{"company", "create", "--name", "Escola", "--document", "11222333000181", "--slug", "escola"}, {"serve"}} {
			var out, errb bytes.Buffer
			err := run(context.Background(), args, env(map[string]string{"PARCELA_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_ADDR": "127.0.0.1:0",
				"PARCELA_OPS_ADDR": "127.0.0.1:0"}), &out, &errb)
			if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s, %v: %v", name, args, err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "parcela.db")); err == nil {
			t.Errorf("%s: a new ./parcela.db was made", name)
		}
	}
}

// The CLI reads ids as the API does, in any letter case: a token revoked
// by its id in capitals was "not found" and left live (an audit).
func TestCLITakesIdsInCapitals(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	companyID, tokenID, _ := newCompanyToken(t, dsn, "production")
	for _, args := range [][]string{
		{"token", "create", "--company", strings.ToUpper(companyID), "--environment", "sandbox"},
		{"token", "list", "--company", strings.ToUpper(companyID)},
		{"token", "revoke", strings.ToUpper(tokenID)},
	} {
		var out, errb bytes.Buffer
		if err := run(context.Background(), args, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &errb); err != nil {
			t.Errorf("%q: %v", args, errorLine(err))
		}
	}
	for _, line := range strings.Split(cli(t, dsn, "token", "list", "--company", companyID), "\n") {
		if strings.HasPrefix(line, tokenID) && strings.HasSuffix(strings.TrimSpace(line), "-") {
			t.Errorf("the token revoked in capitals is listed live: %s", line)
		}
	}
}

// A stop while serve is still starting is a stop, exit 0, as one once
// serving is: it was a failure (exit 1, "context canceled"), which an
// orchestrator restarts for (an audit).
func TestStopBeforeServingIsNoFailure(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errb := &syncBuffer{}
	err := run(ctx, []string{"serve"}, env(map[string]string{"PARCELA_DATABASE_URL": tempDSN(t), "PARCELA_ADDR": "127.0.0.1:0",
		"PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"}), &syncBuffer{}, errb)
	if err != nil || !strings.Contains(errb.String(), "stopped before serving") {
		t.Errorf("stopped before serving: %v; stderr %s", err, errb.String())
	}
}

// The commands that read or change what a database holds refuse a SQLite
// path where there is none: made and migrated there, company list answered
// an empty table and token revoke "not found", as if the real database
// had lost its rows (an audit).
func TestReadingCommandsRefuseAMissingDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := "01a227f0-5b99-7b8f-9034-f94619ff408e"
	for i, args := range [][]string{
		{"company", "list"},
		{"token", "create", "--company", id, "--environment", "sandbox"},
		{"token", "list", "--company", id},
		{"token", "revoke", id},
	} {
		path := filepath.Join(dir, "typo"+strings.Repeat("x", i)+".db")
		var out, errb bytes.Buffer
		err := run(context.Background(), append(args, "--database", path), env(nil), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "no database at") {
			t.Errorf("%v at a missing path: %v, %q", args, err, out.String())
		}
		if _, statErr := os.Stat(path); statErr == nil {
			t.Errorf("%v made %s", args, path)
		}
	}
}

// The reading commands refuse a database without parcela's schema, and
// leave it as it was: an empty file (a failed restore's copy) or another
// service's PostgreSQL database (the server's default "postgres") was
// given parcela's tables and answered an empty list, "company not found"
// or "token not found", as if the real database had lost its rows (an
// audit).
func TestReadingCommandsRefuseADatabaseWithoutParcela(t *testing.T) {
	t.Parallel()
	empty := filepath.Join(t.TempDir(), "restored.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dsns := map[string]string{"an empty SQLite file": empty}
	if os.Getenv("PARCELA_TEST_POSTGRES_URL") != "" {
		dsns["another PostgreSQL database"] = freshPostgres(t)
	}
	id := "01a227f0-5b99-7b8f-9034-f94619ff408e"
	for name, dsn := range dsns {
		for _, args := range [][]string{
			{"company", "list"},
			{"token", "create", "--company", id, "--environment", "sandbox"},
			{"token", "list", "--company", id},
			{"token", "revoke", id},
		} {
			var out, errb bytes.Buffer
			err := run(context.Background(), append(args, "--database", dsn), env(nil), &out, &errb)
			if err == nil || !strings.Contains(err.Error(), "no parcela schema") {
				t.Errorf("%s: %v: %v, %q", name, args, err, out.String())
			}
		}
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("the empty file was written: %v, %v", fi, err)
	}
	if pg, ok := dsns["another PostgreSQL database"]; ok {
		c, err := pgx.Connect(context.Background(), pg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		var n int
		if err := c.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("the reading commands made %d tables in a database that was not parcela's", n)
		}
	}
}

// Another service's SQLite database that keeps its versions with goose,
// as many Go services do, is not parcela's either: its version table was
// taken for parcela's, and company list ran parcela's migrations on it
// from the next version (a review).
func TestReadingCommandsRefuseAnotherGooseDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')))`,
		`INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, 1), (1, 1), (2, 1)`,
		`CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"company", "list", "--database", path}, env(nil), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "no parcela schema") {
		t.Errorf("another service's goose database: %v, %q", err, out.String())
	}
	db, err = sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables, version int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table'), (SELECT max(version_id) FROM goose_db_version)`).Scan(&tables, &version); err != nil {
		t.Fatal(err)
	}
	if tables != 3 || version != 2 { // goose_db_version, users and sqlite_sequence
		t.Errorf("the other service's database changed: %d tables, version %d", tables, version)
	}
}

// A flag given twice is refused: the last one won without a word, and
// --environment production --environment sandbox made a sandbox token (an
// audit). A value that looks like a flag is still a value.
func TestFlagGivenTwiceIsRefused(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	companyID, _, _ := newCompanyToken(t, dsn, "production")
	for _, args := range [][]string{
		{"token", "create", "--company", companyID, "--environment", "production", "--environment", "sandbox"},
		{"token", "create", "--company", companyID, "--environment=production", "-environment", "sandbox"},
		{"company", "list", "--json", "--json"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "given twice") || exitCode(err) != 2 {
			t.Errorf("%q: %v, %q", args, err, out.String())
		}
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"company", "create", "--name", "-Escola", "--document", "11222333000181", "--slug", "escola-dash"},
		env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &errb); err != nil && strings.Contains(err.Error(), "given twice") {
		t.Errorf("a value starting with a dash: %v", err)
	}
}

// token revoke takes its id among its flags: a flag given on both sides
// of the id, or twice before it, is refused too (a review: the last
// --database won, and the token was "revoked" in another database).
func TestTokenRevokeRefusesAFlagGivenTwice(t *testing.T) {
	t.Parallel()
	dsn := tempDSN(t)
	_, tokenID, _ := newCompanyToken(t, dsn, "production")
	other := "sqlite:" + filepath.Join(t.TempDir(), "other.db")
	for _, args := range [][]string{
		{"token", "revoke", "--database", dsn, "--database", other, tokenID},
		{"token", "revoke", "--database", dsn, tokenID, "--database", other},
		{"token", "revoke", tokenID, "--database", dsn, "--database", other},
	} {
		var out, errb bytes.Buffer
		if err := run(context.Background(), args, env(nil), &out, &errb); err == nil || !strings.Contains(err.Error(), "given twice") {
			t.Errorf("%q: %v", args, err)
		}
	}
	cli(t, dsn, "token", "revoke", tokenID) // once, it revokes
}

// The tests' and the harness's variables are no database address under
// another name: the README exports PARCELA_TEST_POSTGRES_URL beside serve
// --demo, which then refused to start (a review). Not parallel: it
// replaces environ and the working directory.
func TestTestVariablesAreNoDatabaseAddress(t *testing.T) {
	t.Chdir(t.TempDir())
	environ = func() []string {
		return []string{"PARCELA_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres"}
	}
	t.Cleanup(func() { environ = os.Environ })
	if dsn, err := databaseAddress("", env(nil)); err != nil || dsn != "parcela.db" {
		t.Errorf("with PARCELA_TEST_POSTGRES_URL set: %q, %v", dsn, err)
	}
}

// A public address of "/" alone ("${PUBLIC_URL}/" with the secret
// missing) is empty once its slash is trimmed, and refused as empty (a
// review).
func TestSlashAlonePublicURLIsRefused(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"serve"}, env(map[string]string{"PARCELA_DATABASE_URL": tempDSN(t), "PARCELA_PUBLIC_URL": "/",
		"PARCELA_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"}), &syncBuffer{}, &syncBuffer{})
	if err == nil || !strings.Contains(err.Error(), "PARCELA_PUBLIC_URL is set but empty") {
		t.Errorf("PARCELA_PUBLIC_URL=/: %v", err)
	}
}
