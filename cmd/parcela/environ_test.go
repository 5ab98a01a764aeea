package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// A PARCELA_ variable serve does not read is logged at start, with the
// one it most likely misspells: a misspelt PARCELA_PUBLIC_URL had the
// links customers get name the listener's own address, without a word.
// Not parallel: it replaces environ.
func TestServeWarnsOfVariablesItDoesNotRead(t *testing.T) {
	environ = func() []string {
		return []string{"HOME=/root", "PARCELA_PUBLIC_ULR=https://pay.example.com", "PARCELA_SHUTDOWN_TIMOUT=1s",
			"PARCELA_SOMETHING=1", "PARCELA_TEST_POSTGRES_URL=postgres://x", "PARCELA_CHROMIUM=/usr/bin/chromium", "PARCELA_ADDR=127.0.0.1:0"}
	}
	t.Cleanup(func() { environ = os.Environ })
	ts := startServer(t, tempDSN(t), nil)
	ts.stop()
	log := ts.stderr.String()
	for _, want := range []string{
		`PARCELA_PUBLIC_ULR is not a variable parcela reads: it has no effect; did you mean PARCELA_PUBLIC_URL?`,
		`PARCELA_SHUTDOWN_TIMOUT is not a variable parcela reads: it has no effect; did you mean PARCELA_SHUTDOWN_TIMEOUT?`,
		`PARCELA_SOMETHING is not a variable parcela reads: it has no effect"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	for _, quiet := range []string{"PARCELA_TEST_POSTGRES_URL", "PARCELA_CHROMIUM", "HOME", "PARCELA_ADDR is not"} {
		if strings.Contains(log, quiet) {
			t.Errorf("log names %s:\n%s", quiet, log)
		}
	}
	if strings.Contains(log, "pay.example.com") {
		t.Error("an unknown variable's value was logged")
	}
}

// The list the warning checks against is what serve reads and what the
// README documents.
func TestServeVariablesAreTheOnesReadAndDocumented(t *testing.T) {
	t.Parallel()
	read := map[string]bool{"PARCELA_DATABASE_URL": true} // read by openDB
	if _, err := readServeConfig(func(name string) string { read[name] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	for name := range read {
		if strings.HasPrefix(name, "PARCELA_") && !slices.Contains(serveVariables, name) {
			t.Errorf("serve reads %s, missing from serveVariables", name)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, name := range regexp.MustCompile(`PARCELA_[A-Z_]+[A-Z]`).FindAllString(string(readme), -1) {
		documented[name] = true
		if !slices.Contains(serveVariables, name) && !slices.Contains(toolVariables, name) && !strings.HasPrefix(name, "PARCELA_TEST_") {
			t.Errorf("README names %s, which serve does not know", name)
		}
	}
	for _, name := range serveVariables {
		if !read[name] {
			t.Errorf("serveVariables holds %s, which serve does not read", name)
		}
		if !documented[name] {
			t.Errorf("serveVariables holds %s, which the README does not document", name)
		}
	}
}

// What every instance behind one address needs set alike (the README's
// "every instance … needs the same") is said where an operator reads how
// to run several: the production guide. It said nothing of
// PARCELA_PAGES_SECRET, and instances that each drew their own refused
// the payer's forms whenever a post reached another instance than its
// page came from.
func TestProductionGuideNamesWhatEveryInstanceShares(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../../docsite/guides/production.md")
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for _, row := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(row, "| `PARCELA_") || !strings.Contains(row, "every instance behind one address needs the same") {
			continue
		}
		for _, name := range regexp.MustCompile(`PARCELA_[A-Z_]+[A-Z]`).FindAllString(strings.SplitN(row, "|", 3)[1], -1) {
			shared++
			if !strings.Contains(string(guide), "`"+name+"`") {
				t.Errorf("the README says every instance needs the same %s; the production guide does not name it", name)
			}
		}
	}
	if shared == 0 {
		t.Fatal("the README names no variable every instance needs the same")
	}
}

// The README's list of what each instance keeps to itself names the payer
// pages' own: their read and post limits, counted in each process, and the
// checkout's memory of a form just sent, which another instance does not
// share (web/submissions.go). It named the API's alone, and an operator
// adding instances took the pages' for shared.
func TestReadmeListsThePagesPerInstanceState(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(readme), "\nPer instance, not shared:")
	if !ok {
		t.Fatal("the README has no list of what is per instance")
	}
	list, _, _ = strings.Cut(list, "\n\n")
	list = strings.Join(strings.Fields(list), " ")
	for _, want := range []string{"`PARCELA_PAGE_RATE_LIMIT`", "on posts", "double click"} {
		if !strings.Contains(list, want) {
			t.Errorf("the README's list of what is per instance does not name %s", want)
		}
	}
}

// PARCELA_DATABASE_URL set to nothing (a secret that did not reach the
// deployment) stops every command, where it was taken as unset: serve ran
// production on a new, empty parcela.db in the working directory. Not
// parallel: it replaces environ and the working directory.
func TestEmptyDatabaseURLIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	environ = func() []string { return []string{"PARCELA_DATABASE_URL="} }
	t.Cleanup(func() { environ = os.Environ })
	for _, args := range [][]string{{"migrate"}, {"company", "list"}, {"serve"}} {
		err := run(context.Background(), args, env(map[string]string{"PARCELA_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_ADDR": "127.0.0.1:0",
			"PARCELA_OPS_ADDR": "127.0.0.1:0"}), &syncBuffer{}, &syncBuffer{})
		if err == nil || !strings.Contains(err.Error(), "PARCELA_DATABASE_URL is set but empty") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if files, _ := os.ReadDir(dir); len(files) > 0 {
		t.Errorf("files made: %v", files)
	}
	// A database given is opened as ever.
	cli(t, "sqlite:"+filepath.Join(dir, "given.db"), "migrate")
}

// -h and --help print the command's flags on stdout and succeed: they
// were a usage error (exit 2) pointing to 'parcela help', which lists no
// command's flags, so an operator learned them only from the README.
func TestEveryCommandsHelpListsItsFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"serve", "--help"}, []string{"-database", "-demo"}},
		{[]string{"migrate", "-h"}, []string{"-database"}},
		{[]string{"company", "create", "--help"}, []string{"-name", "-slug", "-zipcode", "-city-ibge-code", "-logo"}},
		{[]string{"company", "list", "-help"}, []string{"-json"}},
		{[]string{"token", "create", "-h"}, []string{"-company", "-environment"}},
		{[]string{"token", "revoke", "--help"}, []string{"parcela token revoke ID", "-database"}},
		{[]string{"demo", "--help"}, []string{"-json"}},
		// The commands that group subcommands list them.
		{[]string{"company", "-h"}, []string{"create|list", "parcela company create --help"}},
		{[]string{"token", "--help"}, []string{"create|list|revoke"}},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), tt.args, env(map[string]string{"PARCELA_DATABASE_URL": "sqlite:" + dir + "/x.db"}), &out, &errb)
		if err != nil || exitCode(err) == 2 {
			t.Errorf("%v: %v", tt.args, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: the help lacks %q:\n%s", tt.args, w, out.String())
			}
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("a help touched the database: %v %v", entries, err)
	}
}

// --database given empty (--database "$DATABASE_URL" in a unit file whose
// variable did not reach it) is refused like the empty variable: it fell
// back to the variable, or to a new, empty parcela.db in the working
// directory, which serve then served.
func TestEmptyDatabaseFlagIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	vars := env(map[string]string{"PARCELA_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"})
	for _, args := range [][]string{{"migrate", "--database="}, {"company", "list", "--database", ""}, {"serve", "--database", ""},
		{"token", "revoke", "--database=", "01a21f8e-a7b6-7ed2-9043-77c233bb32b6"}, {"demo", "--database="}} {
		// Bounded: a serve that took the flag serves until it ends.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := run(ctx, args, vars, &syncBuffer{}, &syncBuffer{})
		cancel()
		if _, ok := err.(usageError); !ok || !strings.Contains(err.Error(), "-database") || !strings.Contains(err.Error(), "empty") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if files, _ := os.ReadDir(dir); len(files) > 0 {
		t.Errorf("files made: %v", files)
	}
}

// A database address naming a directory (the data directory, for the file
// in it) is refused naming it as one, and no lock file is left beside it:
// serve said the directory "has 2 hard links", the other commands "unable
// to open database file (14)".
func TestDatabaseThatIsADirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	vars := env(map[string]string{"PARCELA_DATABASE_URL": data, "PARCELA_ADDR": "127.0.0.1:0", "PARCELA_SANDBOX_ADDR": "127.0.0.1:0", "PARCELA_OPS_ADDR": "127.0.0.1:0"})
	for _, args := range [][]string{{"serve"}, {"migrate"}, {"company", "list"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := run(ctx, args, vars, &syncBuffer{}, &syncBuffer{})
		cancel()
		if err == nil || !strings.Contains(err.Error(), data+" is a directory") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Errorf("files made beside it: %v", files)
	}
}
