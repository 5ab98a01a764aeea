package sqldb

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// The schema is portable SQL, so both engines run the same migrations; a
// migration that must differ would go in a dialect's own directory.
//
//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies parcela's migrations, then River's, then loads the
// reference data (IBGE states and municipalities, product kinds and shifts).
// It is safe to run on every start.
func (db *DB) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	dialect := goose.DialectSQLite3
	if db.dialect == Postgres {
		dialect = goose.DialectPostgres
		// Replicas starting together must not migrate at the same time.
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, db.write, sub, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := db.migrateRiver(ctx); err != nil {
		return fmt.Errorf("migrate job queue: %w", err)
	}
	return db.seed(ctx)
}

func (db *DB) migrateRiver(ctx context.Context) error {
	if db.dialect == Postgres {
		m, err := rivermigrate.New(riverpgxv5.New(db.pool), nil)
		if err != nil {
			return err
		}
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	}
	m, err := rivermigrate.New(riversqlite.New(db.write), nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}
