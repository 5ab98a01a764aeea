package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"net/url"
	"os"
	"slices"
	"strings"

	"parcela"
	"parcela/sqldb"
)

// newFlags returns a flag set that reports errors instead of exiting, with
// the --database flag every command shares.
func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("parcela "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	db := new(string)
	fs.Func("database", "the `database`: file path, sqlite:PATH or postgres://… (default $PARCELA_DATABASE_URL or parcela.db)", func(s string) error {
		if s == "" {
			// --database "$DATABASE_URL" whose variable did not reach the
			// deployment: as for PARCELA_DATABASE_URL set but empty, not
			// a new, empty parcela.db served in the working directory.
			return errors.New("empty: give the database, or leave the flag out for $PARCELA_DATABASE_URL or parcela.db")
		}
		*db = s
		return nil
	})
	return fs, db
}

// parse parses args; errors become one-line usage errors, and -h or
// --help the command's flags (helpShown), which run prints.
func parse(fs *flag.FlagSet, args []string) error {
	if name := givenTwice(fs, args); name != "" {
		// The last one won without a word: --environment production
		// --environment sandbox made a sandbox token (an audit).
		return usageError{fmt.Sprintf("%s: --%s given twice", fs.Name(), name)}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return flagHelp(fs)
		}
		return usageError{fs.Name() + ": " + err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}

// givenTwice reads args as fs.Parse does (up to the first argument that is
// no flag, or "--") and names a flag given more than once, or "".
func givenTwice(fs *flag.FlagSet, args []string) string {
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return ""
		}
		name, _, inline := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			return "" // fs.Parse refuses it
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !inline && !(ok && b.IsBoolFlag()) {
			i++ // its value
		}
		if seen[name] {
			return name
		}
		seen[name] = true
	}
	return ""
}

// helpShown is a command's help, asked for with -h or --help: run prints
// it on stdout and exits 0. It was a usage error (exit 2) pointing to
// 'parcela help', which lists no command's flags.
type helpShown struct{ text string }

func (h helpShown) Error() string { return h.text }

// flagHelp is fs's usage line and its flags with their defaults.
func flagHelp(fs *flag.FlagSet) helpShown {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s [flags]\n\nflags:\n", fs.Name())
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	return helpShown{b.String()}
}

// subcommandsHelp is the help of a command made of subcommands: their
// names, and where each one's flags are told.
func subcommandsHelp(cmd string, subs ...string) helpShown {
	see := make([]string, len(subs))
	for i, s := range subs {
		see[i] = "'parcela " + cmd + " " + s + " --help'"
	}
	last := len(see) - 1
	return helpShown{"usage: parcela " + cmd + " " + strings.Join(subs, "|") + " [flags]\n\nsee " +
		strings.Join(see[:last], ", ") + " and " + see[last] + "\n"}
}

// wantsHelp tells whether args ask for help before a "--" ends the flags.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// isHelp tells whether a is a request for help (-h, -help, --help, --h),
// as the flag package reads them.
func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "--h" }

// sqliteFileName tells whether v reads as a SQLite database's address:
// sqlite:PATH, or a path ending as database files do.
func sqliteFileName(v string) bool {
	lower := strings.ToLower(v)
	return strings.HasPrefix(lower, "sqlite:") || strings.HasSuffix(lower, ".db") || strings.HasSuffix(lower, ".sqlite") || strings.HasSuffix(lower, ".sqlite3")
}

// databaseAddress is the database named by --database or the environment.
func databaseAddress(flagValue string, getenv func(string) string) (string, error) {
	dsn := flagValue
	if dsn == "" {
		dsn = getenv("PARCELA_DATABASE_URL")
	}
	if dsn == "" && slices.Contains(environ(), "PARCELA_DATABASE_URL=") {
		// Set, but to nothing: a deployment whose secret did not reach it
		// (PARCELA_DATABASE_URL=$DATABASE_URL), which parcela.db would have
		// served on a new, empty database in the working directory.
		return "", usageError{"PARCELA_DATABASE_URL is set but empty: give the database, or unset it for parcela.db"}
	}
	if dsn == "" {
		for _, kv := range environ() {
			name, value, _ := strings.Cut(kv, "=")
			// The tests' and the harness's own variables name their own
			// databases (the README exports PARCELA_TEST_POSTGRES_URL beside
			// serve --demo, a review).
			if strings.HasPrefix(name, "PARCELA_TEST_") || strings.HasPrefix(name, "PARCELA_BENCH_") {
				continue
			}
			if name != "PARCELA_DATABASE_URL" && (name == "DATABASE_URL" || strings.HasPrefix(name, "PARCELA_")) &&
				(strings.HasPrefix(value, "postgres://") || strings.HasPrefix(value, "postgresql://")) {
				// A database's address under another name (DATABASE_URL,
				// which platforms set; PARCELA_DB_URL): the default served,
				// or took the company or token being made, in a new
				// ./parcela.db (an audit). Not quoted: it holds a password.
				return "", usageError{name + " holds a PostgreSQL address, and parcela reads PARCELA_DATABASE_URL: set it, or --database (unset " + name + " for parcela.db)"}
			}
			if strings.HasPrefix(name, "PARCELA_") && !slices.Contains(serveVariables, name) && !slices.Contains(toolVariables, name) &&
				sqliteFileName(value) {
				// A SQLite file under a name parcela does not read
				// (PARCELA_DB_URL=/data/parcela.db): migrate and company
				// create made ./parcela.db without a word (an audit).
				return "", usageError{name + " holds a SQLite file (" + value + "), and parcela reads PARCELA_DATABASE_URL: set it, or --database (unset " + name + " for parcela.db)"}
			}
		}
		for _, u := range unknownVariables(environ()) {
			if u[1] == "PARCELA_DATABASE_URL" {
				// A misspelt address: the default would serve, or take the
				// company or token being made, in a new ./parcela.db that
				// nobody meant, without a word (an audit).
				return "", usageError{u[0] + " is set, and parcela reads PARCELA_DATABASE_URL: did you mean it? Set it, or --database (unset " + u[0] + " for parcela.db)"}
			}
		}
		dsn = "parcela.db"
	}
	return dsn, nil
}

// openDB opens and migrates the database named by --database or the environment.
func openDB(ctx context.Context, flagValue string, getenv func(string) string, cfg sqldb.Config) (*sqldb.DB, error) {
	dsn, err := databaseAddress(flagValue, getenv)
	if err != nil {
		return nil, err
	}
	return openAt(ctx, dsn, cfg)
}

// openExistingDB is openDB for a command that reads or changes what is
// there (company list, token create, list and revoke): a SQLite file that
// does not exist is refused rather than made. Made and migrated at a
// mistyped path, it answered an empty list, or "not found", as if the
// real database had lost its rows (an audit).
func openExistingDB(ctx context.Context, flagValue string, getenv func(string) string) (*sqldb.DB, error) {
	dsn, err := databaseAddress(flagValue, getenv)
	if err != nil {
		return nil, err
	}
	if path, ok := sqldb.SQLitePath(dsn); ok {
		if fi, err := os.Stat(path); errors.Is(err, iofs.ErrNotExist) {
			return nil, fmt.Errorf("no database at %s: give the one parcela serves (--database or PARCELA_DATABASE_URL); migrate or company create makes a new one", path)
		} else if err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			// Opened, it would be written (a log mode in its header)
			// before its schema is found missing.
			return nil, fmt.Errorf("no parcela schema in %s (an empty file): give the database parcela serves (--database or PARCELA_DATABASE_URL); migrate or company create makes one", databaseNamed(dsn))
		}
	}
	db, err := sqldb.Open(ctx, dsn, sqldb.Config{})
	if err != nil {
		return nil, err
	}
	// Another service's database, or an empty file, is not parcela's: made
	// parcela's here, it too answered an empty list (an audit).
	if ok, err := db.HasSchema(ctx); err != nil || !ok {
		db.Close()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no parcela schema in %s: give the database parcela serves (--database or PARCELA_DATABASE_URL); migrate or company create makes one", databaseNamed(dsn))
	}
	return migrated(ctx, db)
}

// databaseNamed names the database dsn addresses for a message: its file,
// or its name, host and user, never its password.
func databaseNamed(dsn string) string {
	if path, ok := sqldb.SQLitePath(dsn); ok {
		return "the database at " + path
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "the PostgreSQL database given"
	}
	return fmt.Sprintf("the PostgreSQL database %q on %s (user %q)", strings.TrimPrefix(u.Path, "/"), u.Host, u.User.Username())
}

func openAt(ctx context.Context, dsn string, cfg sqldb.Config) (*sqldb.DB, error) {
	db, err := sqldb.Open(ctx, dsn, cfg)
	if err != nil {
		return nil, err
	}
	return migrated(ctx, db)
}

// migrated is db after Migrate, or closed with its error.
func migrated(ctx context.Context, db *sqldb.DB) (*sqldb.DB, error) {
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// rateFlag is a flag holding an exact decimal rate.
type rateFlag struct {
	r   *parcela.Rate
	set bool
}

func (f *rateFlag) String() string {
	if f.r == nil {
		return ""
	}
	return f.r.String()
}

func (f *rateFlag) Set(s string) error {
	r, err := parcela.ParseRate(s)
	if err != nil {
		return err
	}
	*f.r, f.set = r, true
	return nil
}

func cmdMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbFlag := newFlags("migrate", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	db, err := openDB(ctx, *dbFlag, getenv, sqldb.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}
