// Package sqldbtest gives tests migrated databases: SQLite always, and
// PostgreSQL whenever PARCELA_TEST_POSTGRES_URL is set, so the same test
// functions run against every engine.
package sqldbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"parcela"
	"parcela/bank"
	"parcela/sqldb"
)

// Engines lists the engines available to this test run.
func Engines() []sqldb.Dialect {
	if os.Getenv("PARCELA_TEST_POSTGRES_URL") != "" {
		return []sqldb.Dialect{sqldb.SQLite, sqldb.Postgres}
	}
	return []sqldb.Dialect{sqldb.SQLite}
}

// Each runs fn as a subtest once per engine, each with its own database handle.
func Each(t *testing.T, fn func(t *testing.T, db *sqldb.DB)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) {
			fn(t, Open(t, e, sqldb.Config{}))
		})
	}
}

// Open returns a migrated database of engine e that is closed when the test
// ends. SQLite databases are private to the test; PostgreSQL tests share one
// database per test binary and stay apart by creating their own companies.
func Open(t testing.TB, e sqldb.Dialect, cfg sqldb.Config) *sqldb.DB {
	t.Helper()
	ctx := context.Background()
	dsn := DSN(t, e)
	db, err := sqldb.Open(ctx, dsn, cfg)
	if err != nil {
		t.Fatalf("open %s: %v", e, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// DSN returns a database URL of engine e whose schema is migrated.
func DSN(t testing.TB, e sqldb.Dialect) string {
	t.Helper()
	if e == sqldb.Postgres {
		dsn, err := postgresDB()
		if err != nil {
			t.Fatalf("postgres test database: %v", err)
		}
		return dsn
	}
	tmpl, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("sqlite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "parcela.db")
	if err := copyFile(tmpl, path); err != nil {
		t.Fatal(err)
	}
	return "sqlite:" + path
}

var (
	sqliteOnce sync.Once
	sqlitePath string
	sqliteErr  error
)

// sqliteTemplate migrates one SQLite file per test process; tests copy it,
// which is much faster than migrating and seeding 5,570 cities each time.
func sqliteTemplate() (string, error) {
	sqliteOnce.Do(func() {
		dir, err := os.MkdirTemp("", "parcela-sqlite-template-")
		if err != nil {
			sqliteErr = err
			return
		}
		sqlitePath = filepath.Join(dir, "template.db")
		ctx := context.Background()
		db, err := sqldb.Open(ctx, "sqlite:"+sqlitePath, sqldb.Config{})
		if err != nil {
			sqliteErr = err
			return
		}
		if err := db.Migrate(ctx); err != nil {
			db.Close()
			sqliteErr = err
			return
		}
		// Fold the WAL into the main file so one file is a whole copy.
		if _, err := db.SQLDB().ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			sqliteErr = err
		}
		db.Close()
	})
	return sqlitePath, sqliteErr
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

var (
	pgOnce    sync.Once
	pgDSN     string
	pgErr     error
	pgCleanup func()
)

// postgresDB creates a fresh database for this test binary, migrated once.
func postgresDB() (string, error) {
	pgOnce.Do(func() {
		base := os.Getenv("PARCELA_TEST_POSTGRES_URL")
		ctx := context.Background()
		admin, err := pgx.Connect(ctx, base)
		if err != nil {
			pgErr = err
			return
		}
		defer admin.Close(ctx)
		var b [6]byte
		rand.Read(b[:])
		name := "parcela_test_" + hex.EncodeToString(b[:])
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			pgErr = err
			return
		}
		u, err := url.Parse(base)
		if err != nil {
			pgErr = err
			return
		}
		u.Path = "/" + name
		pgDSN = u.String()
		pgCleanup = func() {
			c, err := pgx.Connect(context.Background(), base)
			if err != nil {
				return
			}
			defer c.Close(context.Background())
			// A database left behind is named parcela_test_*; nothing else depends on it.
			_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		}
		db, err := sqldb.Open(ctx, pgDSN, sqldb.Config{})
		if err != nil {
			pgErr = err
			return
		}
		defer db.Close()
		pgErr = db.Migrate(ctx)
	})
	return pgDSN, pgErr
}

// Main prepares SQLite (sqldb.PrepareSQLite), runs a package's tests, then after (each thing the package's tests
// share, to close), then drops the PostgreSQL database they used. Call it
// from TestMain.
func Main(m *testing.M, after ...func()) { MainChecked(m, nil, after...) }

// MainChecked is Main with a check of what the tests did as a whole, made
// once they all passed: an error it returns fails the run.
func MainChecked(m *testing.M, check func() error, after ...func()) {
	// Before any test opens SQLite, by the store or by itself.
	sqldb.PrepareSQLite()
	code := m.Run()
	if code == 0 && check != nil {
		if err := check(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	// The rows the tests wrote on PostgreSQL (one database for the binary)
	// are checked against what no key states (saleRowChecks).
	if code == 0 && pgDSN != "" {
		if err := checkSaleRows(context.Background(), pgDSN); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: the sale rows the tests wrote:", err)
			code = 1
		}
	}
	for _, f := range after {
		f()
	}
	if pgCleanup != nil {
		pgCleanup()
	}
	if sqlitePath != "" {
		_ = os.RemoveAll(filepath.Dir(sqlitePath)) // a temporary directory
	}
	os.Exit(code)
}

// Suffix returns a short random string for unique slugs and names.
func Suffix() string {
	var b [4]byte
	rand.Read(b[:])
	return strings.ToLower(hex.EncodeToString(b[:]))
}

// Company creates a company with default settings in db.
func Company(t testing.TB, db *sqldb.DB) *parcela.Company {
	t.Helper()
	c := parcela.NewCompany("Test School "+Suffix(), "11222333000181", "test-"+Suffix())
	if err := db.CreateCompany(context.Background(), &c); err != nil {
		t.Fatalf("create company: %v", err)
	}
	return &c
}

// Token creates an access token for company c in env and returns the secret.
func Token(t testing.TB, db *sqldb.DB, companyID string, env parcela.Environment) string {
	t.Helper()
	_, plain, err := db.CreateToken(context.Background(), companyID, env)
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	return plain
}

// Links are the public addresses tests render forms with.
var Links = parcela.LinksByEnvironment{
	parcela.Sandbox:    {PublicURL: "https://sandbox.parcela.test"},
	parcela.Production: {PublicURL: "https://api.parcela.test"},
}

// Acquirers take cards in both environments with the simulated acquirer.
var Acquirers = parcela.AcquirersByEnvironment{parcela.Sandbox: bank.SimulatedAcquirer{}, parcela.Production: bank.SimulatedAcquirer{}}

// Services wires every use case over db with the simulated bank and acquirer.
func Services(db *sqldb.DB, clock parcela.Clock) *parcela.Services {
	if clock == nil {
		clock = parcela.SystemClock{}
	}
	return parcela.NewServices(db, bank.NewSimulated(), Acquirers, clock, Links)
}
