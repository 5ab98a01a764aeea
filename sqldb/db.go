// Package sqldb is parcela's store: one implementation over database/sql
// whose SQL runs unchanged on SQLite (the embedded default) and PostgreSQL.
// Each exported method runs one transaction over small helpers that take
// (ctx, tx, …).
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite" // also registers the "sqlite" driver

	"parcela"
)

// Dialect names the database engine behind a DB.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is a handle on the store. On SQLite writes go through a single
// connection (SQLite has one writer anyway, and one connection means no
// SQLITE_BUSY between our own writers) and reads through a pool of readers.
type DB struct {
	dialect Dialect
	write   *sql.DB
	read    *sql.DB
	reader  querier          // reads outside transactions; statement-cached on SQLite
	cache   *stmtCache       // SQLite only
	ckpt    *walCheckpointer // SQLite only
	pool    *pgxpool.Pool    // PostgreSQL only; River and transactions use it
	Clock   parcela.Clock
	// Enqueue, when set, inserts background jobs inside a store transaction.
	Enqueue Enqueuer
	// SweepScope, when set, limits the sweeps to one company. Tests that
	// share a database set it so that moving their clock touches only their
	// own rows; production leaves it empty.
	SweepScope string
	// DeliveryQueue, when set, replaces the delivery queue's name, for the
	// same reason.
	DeliveryQueue string
	// Payments issues boletos and Pix charges.
	Payments parcela.PaymentProvider
	// Links are each environment's public addresses, used in event payloads.
	Links map[parcela.Environment]parcela.Links

	rebindCache sync.Map
	numbers     numberBlock
	numbersMu   sync.Mutex
}

// Open connects to the database named by dsn: a file path or "sqlite:PATH"
// for SQLite, "postgres://…" or "postgresql://…" for PostgreSQL.
func Open(ctx context.Context, dsn string, clock parcela.Clock) (*DB, error) {
	if clock == nil {
		clock = parcela.SystemClock{}
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return openPostgres(ctx, dsn, clock)
	}
	path := strings.TrimPrefix(dsn, "sqlite:")
	if path == "" {
		return nil, errors.New("empty database path")
	}
	return openSQLite(ctx, path, clock)
}

func openSQLite(ctx context.Context, path string, clock parcela.Clock) (*DB, error) {
	if dir := filepath.Dir(path); dir != "." {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("database directory %s: %w", dir, err)
		}
	}
	base := "file:" + url.PathEscape(path) + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	// temp_store(memory): a multi-row insert's statement journal (bills with
	// their indexes and count trigger) outgrows 64 KB and would spill to a
	// temporary file inside the writer's transaction.
	write := sql.OpenDB(cachingConnector{dsn: base + "&_pragma=journal_mode(WAL)&_pragma=temp_store(memory)&_pragma=wal_autocheckpoint(0)&_txlock=immediate", d: cachingDriver{&sqlite.Driver{}}})
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// 16 MB of page cache per reader (SQLite's default is 2 MB) keeps hot
	// index pages in memory at millions of bills, within the RSS budget.
	read, err := sql.Open("sqlite", base+"&_pragma=query_only(1)&_pragma=cache_size(-16000)")
	if err != nil {
		write.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	read.SetConnMaxIdleTime(0)
	ckpt, err := startCheckpointer(base, 250*time.Millisecond)
	if err != nil {
		write.Close()
		read.Close()
		return nil, err
	}
	cache := &stmtCache{pool: read}
	return &DB{dialect: SQLite, write: write, read: read, reader: cache, cache: cache, ckpt: ckpt, Clock: clock}, nil
}

func openPostgres(ctx context.Context, dsn string, clock parcela.Clock) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres url: %w", err)
	}
	if cfg.MaxConns < 16 {
		cfg.MaxConns = 16
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	return &DB{dialect: Postgres, write: db, read: db, reader: db, pool: pool, Clock: clock}, nil
}

// Dialect tells which engine this is.
func (db *DB) Dialect() Dialect { return db.dialect }

// SQLDB returns the writer pool, for River's SQLite driver and for tools.
func (db *DB) SQLDB() *sql.DB { return db.write }

// PgxPool returns the pgx pool on PostgreSQL (nil on SQLite), for River.
func (db *DB) PgxPool() *pgxpool.Pool { return db.pool }

// Ping checks that the database answers, for /readyz.
func (db *DB) Ping(ctx context.Context) error {
	return db.read.PingContext(ctx)
}

// Close releases every connection.
func (db *DB) Close() error {
	if db.cache != nil {
		db.cache.close()
	}
	var err error
	if db.ckpt != nil {
		err = db.ckpt.stop()
	}
	if db.read != db.write {
		err = db.read.Close()
	}
	if e := db.write.Close(); e != nil {
		err = e
	}
	if db.pool != nil {
		db.pool.Close()
	}
	return err
}

// rebind turns the portable "?" placeholders into PostgreSQL's "$n".
func (db *DB) rebind(q string) string {
	if db.dialect != Postgres {
		return q
	}
	if v, ok := db.rebindCache.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	out := b.String()
	db.rebindCache.Store(q, out)
	return out
}

// queryRow runs a read outside any transaction, on the reader pool.
func (db *DB) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return db.reader.QueryRowContext(ctx, db.rebind(q), args...)
}

// query runs a read outside any transaction, on the reader pool.
func (db *DB) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return db.reader.QueryContext(ctx, db.rebind(q), args...)
}

// pgxConn is what a pgx connection reached through database/sql offers.
type pgxConn interface{ Conn() *pgx.Conn }
