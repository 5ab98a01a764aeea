package sqldb

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// The schema is portable SQL in migrations/; what cannot be (triggers) is in
// migrations/sqlite and migrations/postgres, numbered in the same sequence.
//
//go:embed migrations
var migrations embed.FS

// migrationFS lays a dialect's own migrations over the portable ones.
type migrationFS struct{ portable, own fs.FS }

func (m migrationFS) Open(name string) (fs.File, error) {
	if f, err := m.own.Open(name); err == nil {
		return f, nil
	}
	return m.portable.Open(name)
}

func (m migrationFS) Glob(pattern string) ([]string, error) {
	a, err := fs.Glob(m.portable, pattern)
	if err != nil {
		return nil, err
	}
	b, err := fs.Glob(m.own, pattern)
	if err != nil {
		return nil, err
	}
	out := append(a, b...)
	slices.Sort(out)
	return slices.Compact(out), nil
}

func (db *DB) migrationFiles() (fs.FS, error) {
	portable, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	own, err := fs.Sub(portable, string(db.dialect))
	if err != nil {
		return nil, err
	}
	return migrationFS{portable: portable, own: own}, nil
}

// Migrate applies parcela's migrations, then River's, then loads the
// reference data (IBGE states and municipalities, product kinds and shifts).
// It is safe to run on every start.
func (db *DB) Migrate(ctx context.Context) error {
	sub, err := db.migrationFiles()
	if err != nil {
		return err
	}
	dialect := goose.DialectSQLite3
	if db.dialect == Postgres {
		dialect = goose.DialectPostgres
		// Replicas starting together must not migrate at the same time:
		// not parcela's migrations, nor River's (which take no lock of
		// their own), nor the seed, so one lock is held across all three.
		unlock, err := db.lockMigrations(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer unlock()
	}
	p, err := goose.NewProvider(dialect, db.write, sub, goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(db.boletoExpiryMigration()))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if err := migrateUp(ctx, p); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// Up passes over versions it does not know: a database migrated by a
	// newer parcela would be served by code that does not write its schema.
	current, latest, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if current > latest {
		return fmt.Errorf("the database is at migration %d, newer than this parcela's latest (%d): it was migrated by a newer parcela, which is the one to run", current, latest)
	}
	if err := db.migrateRiver(ctx); err != nil {
		return fmt.Errorf("migrate job queue: %w", err)
	}
	return db.seed(ctx)
}

// HasSchema tells whether the database holds parcela's schema: goose's
// table of versions, with a version applied, beside parcela's companies
// (another service migrated by goose has the first, not the second: a
// review). A command that reads what is
// there refuses a database without it rather than migrating it (an audit:
// pointed at another service's database, or at an empty file from a failed
// restore, company list made parcela's tables there and answered an empty
// list, as if every company were gone).
func (db *DB) HasSchema(ctx context.Context) (bool, error) {
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('goose_db_version', 'companies')`
	if db.dialect == Postgres {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('goose_db_version', 'companies')`
	}
	var tables int
	if err := db.write.QueryRowContext(ctx, q).Scan(&tables); err != nil {
		return false, fmt.Errorf("read the schema: %w", err)
	}
	if tables < 2 {
		return false, nil
	}
	var applied int
	if err := db.write.QueryRowContext(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id > 0 AND is_applied`).Scan(&applied); err != nil {
		return false, fmt.Errorf("read the schema's versions: %w", err)
	}
	return applied > 0, nil
}

// migrationAttempts bounds how often a migration aborted by a deadlock is
// run again.
const migrationAttempts = 3

// migrateUp applies parcela's migrations. Each runs in a transaction of its
// own, so one that PostgreSQL aborted to break a deadlock was rolled back
// whole, and it is run again: a migration that locks tables instances
// still serving write to (00023) can meet them in either order.
//
// On SQLite nothing serializes two processes migrating one file (migrate
// beside a starting serve): both read the versions applied, and the second
// to take the write lock runs again a migration the first committed, which
// fails on its own SQL and rolls back. A failure after which the database
// holds more versions than before is taken up from there; a migration that
// fails by itself fails again with no progress, and its error is returned.
func migrateUp(ctx context.Context, p *goose.Provider) error {
	deadlocks := 0
	for {
		before, _, err := p.GetVersions(ctx)
		if err != nil {
			return err
		}
		_, err = p.Up(ctx)
		if err == nil {
			return nil
		}
		if classify(err) == transient {
			if deadlocks++; deadlocks < migrationAttempts {
				continue
			}
			return err
		}
		if after, _, verr := p.GetVersions(ctx); verr != nil || after <= before {
			return err
		}
	}
}

func (db *DB) migrateRiver(ctx context.Context) error {
	var latest int
	var err error
	if db.dialect == Postgres {
		latest, err = migrateRiverUp(ctx, riverpgxv5.New(db.pool), db.riverApplied)
	} else {
		latest, err = migrateRiverUp(ctx, riversqlite.New(db.write), db.riverApplied)
	}
	if err != nil {
		return err
	}
	// Like parcela's, River's migrations pass over versions they do not know.
	var current int
	if err := db.write.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM river_migration WHERE line = 'main'").Scan(&current); err != nil {
		return err
	}
	if current > latest {
		return fmt.Errorf("the database's job queue is at migration %d, newer than this parcela's latest (%d): it was migrated by a newer parcela, which is the one to run", current, latest)
	}
	return nil
}

// migrateRiverUp applies River's migrations and returns the latest it has.
// Like parcela's (migrateUp), each runs in a transaction of its own, and on
// SQLite two processes migrating one file can both apply the first one
// missing: the second's fails on its own SQL and rolls back. A failure
// after which more of River's versions are applied (applied) than before
// is taken up from there; one that made no progress is returned.
func migrateRiverUp[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], applied func(context.Context) int) (int, error) {
	m, err := rivermigrate.New(driver, nil)
	if err != nil {
		return 0, err
	}
	for {
		before := applied(ctx)
		_, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		if err == nil {
			break
		}
		if applied(ctx) <= before {
			return 0, err
		}
	}
	all := m.AllVersions()
	return all[len(all)-1].Version, nil
}

// riverApplied counts River's migrations applied, 0 before its table
// exists. Counted here, not by River's migrator, which refuses to list a
// version it does not know (a database migrated by a newer parcela, which
// Migrate then refuses with its own message).
func (db *DB) riverApplied(ctx context.Context) int {
	var n int
	if err := db.write.QueryRowContext(ctx, "SELECT COUNT(*) FROM river_migration WHERE line = 'main'").Scan(&n); err != nil {
		return 0
	}
	return n
}

// migrationLockKey is the PostgreSQL advisory lock that Migrate holds.
const migrationLockKey = int64(0x7061726365_6c61) // "parcela"

// lockMigrations waits for the session advisory lock of the migrations, on
// a connection of its own kept until the returned unlock.
func (db *DB) lockMigrations(ctx context.Context) (unlock func(), err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
		conn.Release()
		return nil, fmt.Errorf("lock migrations: %w", err)
	}
	return func() {
		// A lock that cannot be released goes with its connection.
		if _, err := conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", migrationLockKey); err != nil {
			conn.Conn().Close(context.Background())
		}
		conn.Release()
	}, nil
}
