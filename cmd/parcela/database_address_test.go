package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A database address with white space at an end (a secret stored with
// its newline, an env file's stray space) names no file anyone meant:
// taken as a path, it made a new, empty SQLite database named with the
// space, beside the real one, and served it under its own lock (an audit).
func TestDatabaseAddressWithWhiteSpaceIsRefused(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "parcela.db")
	cli(t, real, "migrate")
	for _, dsn := range []string{real + "\n", real + " ", " " + real, " ", "sqlite:" + real + "\r\n",
		"postgres://parcela@127.0.0.1:1/parcela\n"} {
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"migrate"}, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &errb)
		if err == nil || !strings.Contains(errorLine(err), "white space") {
			t.Errorf("PARCELA_DATABASE_URL=%q: %v", dsn, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.TrimSpace(e.Name()) != e.Name() || strings.ContainsAny(e.Name(), "\r\n") {
			t.Errorf("a file %q was made beside the database", e.Name())
		}
	}
	for _, name := range []string{" ", " .lock"} {
		if _, err := os.Stat(name); err == nil {
			_ = os.Remove(name)
			t.Errorf("a file named %q was made", name)
		}
	}
}

// A PostgreSQL address not taken as one (in quotes, as docker --env-file
// keeps them; missing its colon; a password with no scheme) was taken as a
// file path, and the error naming its directory printed the password.
func TestMistypedPostgresAddressIsRefusedWithoutItsPassword(t *testing.T) {
	for _, dsn := range []string{
		`"postgres://parcela:hunter2secret@db.internal:5432/parcela"`,
		`'postgres://parcela:hunter2secret@db.internal:5432/parcela'`,
		`postgres//parcela:hunter2secret@db.internal:5432/parcela`,
		`POSTGRES:/parcela:hunter2secret@db.internal/parcela`,
		`parcela:hunter2secret@db.internal:5432/parcela`,
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"migrate"}, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &errb)
		if err == nil {
			t.Errorf("%s: migrate succeeded", dsn)
			continue
		}
		if line := errorLine(err); strings.Contains(line, "hunter2secret") || strings.Contains(errb.String(), "hunter2secret") {
			t.Errorf("%s: the error shown prints the password: %s", dsn, line)
		}
	}
}

// A misspelt PARCELA_DATABASE_URL left the commands on the default
// ./parcela.db: company create registered the company, and token create
// the seller's token, in a new database nobody served, without a word
// (an audit). Not parallel: it sets environ and the working directory.
func TestMisspeltDatabaseVariableIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	environ = func() []string { return []string{"PARCELA_DATABSE_URL=postgres://parcela@db.internal/parcela"} }
	t.Cleanup(func() { environ = os.Environ })
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"company", "create", "--name", "Escola Q", "--document", "11222333000181", "--slug", "escola-q"},
		env(map[string]string{"PARCELA_DATABSE_URL": "postgres://parcela@db.internal/parcela"}), &out, &errb)
	if err == nil || !strings.Contains(errorLine(err), "PARCELA_DATABSE_URL") || !strings.Contains(errorLine(err), "PARCELA_DATABASE_URL") {
		t.Errorf("company create with PARCELA_DATABSE_URL set: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "parcela.db")); statErr == nil {
		t.Error("a new ./parcela.db was made")
	}
}

// A PostgreSQL that takes the connection and never answers (a stalled
// server, a proxy or firewall that swallows the packets) stops the start
// after 10 s with the user, database and address, as the README says; it
// said "connect to postgres: context deadline exceeded" alone (an audit).
func TestStalledPostgresStartNamesTheServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 100)
	defer func() {
		ln.Close()
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // never answered
		}
	}()
	dsn := "postgres://parcela:pw@" + ln.Addr().String() + "/parcela?sslmode=disable"
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"migrate"}, env(map[string]string{"PARCELA_DATABASE_URL": dsn}), &out, &errb)
	if err == nil {
		t.Fatal("migrate succeeded")
	}
	line := errorLine(err)
	if !strings.Contains(line, ln.Addr().String()) || !strings.Contains(line, "user=parcela") || strings.Contains(line, "pw") {
		t.Errorf("the error names neither the address nor the user and database: %q", line)
	}
}
