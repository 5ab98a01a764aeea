// Package sqldb is parcela's store: one implementation over database/sql
// whose SQL runs unchanged on SQLite (the embedded default) and PostgreSQL.
// It only stores: the use cases in the root package read through it, decide,
// and hand it a parcela.Change, which it applies in one transaction of
// guarded writes. Files are named after the aggregate whose rows they hold.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

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

// Config is what a DB needs besides its address.
type Config struct {
	// Clock times the rows the store writes on its own account (companies,
	// tokens, idempotency keys, delivery attempts). Default: the system clock.
	Clock parcela.Clock
	// Enqueuer inserts the jobs of a transaction's new deliveries, and
	// the voids of the payments it cancels, inside it. Without one, a
	// transaction that queues a job fails.
	Enqueuer Enqueuer
	// Fault is for crash tests only: it runs at each FaultPoint of a
	// transaction that stores an idempotent response, where a test kills
	// the process, panics or cancels the request.
	Fault func(ctx context.Context, at FaultPoint)
	// SQLiteSynchronous is how the SQLite writer syncs its commits: "" or
	// "full" (every commit reaches the disk before it is answered), or
	// "normal" (at checkpoints only: the last commits before a power loss
	// of the machine can be lost, the file is never corrupted).
	SQLiteSynchronous string
}

// FaultPoint is a step of a transaction that stores an idempotent response.
type FaultPoint string

const (
	// BeforeCommit: the request's writes and its response are written, not
	// committed.
	BeforeCommit FaultPoint = "before_commit"
	// AfterCommit: both are committed; the client has no answer yet.
	AfterCommit FaultPoint = "after_commit"
	// CountSeatsInTx: a PATCH giving an offer a seat limit is about to
	// count the offer's sales inside its transaction.
	CountSeatsInTx FaultPoint = "count_seats_in_tx"
)

func (db *DB) fault(ctx context.Context, at FaultPoint) {
	if db.faultHook != nil {
		db.faultHook(ctx, at)
	}
}

// DB is a handle on the store. On SQLite writes go through a single
// connection (SQLite has one writer anyway, and one connection means no
// SQLITE_BUSY between our own writers) and reads through a pool of readers.
type DB struct {
	dialect   Dialect
	write     *sql.DB
	read      *sql.DB
	reader    runner           // reads outside transactions; statement-cached on SQLite
	cache     *stmtCache       // SQLite only
	ckpt      *walCheckpointer // SQLite only
	pool      *pgxpool.Pool    // PostgreSQL only; River and transactions use it
	binder    *binder
	clock     parcela.Clock
	enqueuer  Enqueuer
	faultHook func(ctx context.Context, at FaultPoint)
	writes    writeHealth
	group     *groupWriter // SQLite only
	attempts  attemptGroup
	// writeTurns: PostgreSQL only, one company's transactions a few at a time.
	writeTurns *writeTurns
	// poolRaisedFrom: PostgreSQL only, a pool_max_conns below 16 that the
	// address gave and the pool does not keep (0 when none was).
	poolRaisedFrom int32

	offers offerCache // offers with their company, product and configurations, by catalog version

	// The SQLite file as opened, and its path: Ready checks that the path
	// still names it.
	sqlitePath string
	sqliteFile os.FileInfo

	numbers   numberBlock
	numbersMu sync.Mutex
}

var _ parcela.Store = (*DB)(nil)

// Open connects to the database named by dsn: a file path or "sqlite:PATH"
// for SQLite, "postgres://…" or "postgresql://…" for PostgreSQL.
func Open(ctx context.Context, dsn string, cfg Config) (*DB, error) {
	if cfg.Clock == nil {
		cfg.Clock = parcela.SystemClock{}
	}
	if strings.TrimSpace(dsn) != dsn || strings.IndexFunc(dsn, unicode.IsControl) >= 0 {
		// A secret stored with its newline (echo), an env file's stray
		// space: taken as a path, it named a new, empty database beside the
		// real one, served under its own lock (an audit). Not repeated: it
		// may hold a password.
		return nil, errors.New("the database address has white space at an end, or a control character (a secret stored with its newline?): give it without, as postgres://user@host/dbname or a SQLite file as a path or sqlite:PATH")
	}
	var db *DB
	var err error
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		db, err = openPostgres(ctx, dsn)
	} else if path, perr := sqliteFile(dsn); perr != nil {
		return nil, perr
	} else {
		db, err = openSQLite(ctx, path, cfg.SQLiteSynchronous)
	}
	if err != nil {
		return nil, err
	}
	db.clock, db.enqueuer, db.faultHook = cfg.Clock, cfg.Enqueuer, cfg.Fault
	return db, nil
}

// A database address that is not sqlite: or a PostgreSQL URL is taken as
// a file path. These are not: made into a new empty SQLite file, they
// would serve production beside the real database without a word.
var (
	urlScheme    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]+:`)
	keywordValue = regexp.MustCompile(`^\s*[A-Za-z_]+\s*=`)
)

// sqliteFile is the file a SQLite address names: the address, or what
// follows sqlite:. It refuses what would open another file than the one
// meant: a bare address that reads as another kind (notAPath), and the
// URI forms other SQLite drivers take (file:PATH, PATH?options), which
// parcela would make a new empty file of, named with the options
// (parcela.db?mode=rwc), beside the real database and with its own
// lock. Options are parcela's own settings.
func sqliteFile(dsn string) (string, error) {
	path := strings.TrimPrefix(dsn, "sqlite:")
	switch {
	case path == "":
		return "", errors.New("empty database path")
	case path == dsn && notAPath(dsn) != nil:
		return "", notAPath(dsn)
	case path != dsn && strings.HasPrefix(path, "//"):
		// sqlite:///parcela.db, another driver's URL form, opened
		// /parcela.db at the file system's root.
		return "", errors.New("the database address is a URL (sqlite://…): give the file as a plain path, or sqlite:PATH")
	case strings.HasPrefix(path, "file:"):
		return "", errors.New("the database address is a SQLite URI (file:…): give the file as a plain path, or sqlite:PATH")
	case strings.Contains(path, "?"):
		return "", errors.New("the database address holds a query (?…), and SQLite options are not taken from it: give the file as a plain path, or sqlite:PATH, without options (PARCELA_SQLITE_SYNCHRONOUS and the other settings are parcela's own)")
	}
	return path, nil
}

// notAPath refuses a bare address that reads as another kind of address,
// or that no one meant as a file. Its text is not repeated: it may hold a
// password.
func notAPath(dsn string) error {
	if s := urlScheme.FindString(dsn); s != "" {
		return fmt.Errorf("the database address starts with %q, which is not postgres:// or postgresql://; a SQLite file is a path without a scheme, or sqlite:PATH", s)
	}
	if keywordValue.MatchString(dsn) {
		return errors.New("the database address reads as a PostgreSQL keyword/value string (name=value ...): give it as postgres://user@host/dbname, or a SQLite file as sqlite:PATH")
	}
	if strings.HasPrefix(dsn, `"`) || strings.HasPrefix(dsn, "'") {
		return errors.New("the database address is in quotes (as docker --env-file keeps them): give it without, as postgres://user@host/dbname or a SQLite file as a path or sqlite:PATH")
	}
	if lower := strings.ToLower(dsn); strings.HasPrefix(lower, "postgres") && strings.Contains(dsn, "@") {
		// postgres//user:password@host: a PostgreSQL URL missing its colon,
		// whose path's directory the next error would have named.
		return errors.New("the database address reads as a PostgreSQL URL that is not one: give it as postgres://user@host/dbname (a SQLite file is a path or sqlite:PATH)")
	}
	if strings.Contains(dsn, "@") && strings.Contains(dsn, ":") {
		return errors.New("the database address holds user:password@host as a URL does, but no postgres:// scheme: give it as postgres://user@host/dbname, or a SQLite file as a path or sqlite:PATH")
	}
	return nil
}

// notADirectory refuses a database path that names a directory (the data
// directory given for the file in it): SQLite said only "unable to open
// database file", and serve that the directory "has 2 hard links".
func notADirectory(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("the database %s is a directory: name the database file (%s)", path, filepath.Join(path, "parcela.db"))
	}
	return nil
}

// readerCacheKiB is each SQLite reader's page cache.
const readerCacheKiB = 16000

func openSQLite(ctx context.Context, path, synchronous string) (*DB, error) {
	switch synchronous {
	case "", "full":
		synchronous = "FULL"
	case "normal":
		synchronous = "NORMAL"
	default:
		return nil, fmt.Errorf("SQLite synchronous %q is not full or normal", synchronous)
	}
	if dir := filepath.Dir(path); dir != "." {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("database directory %s: %w", dir, err)
		}
	}
	if err := notADirectory(path); err != nil {
		return nil, err
	}
	if err := oneName(path); err != nil {
		return nil, err
	}
	// synchronous(FULL): a commit flushes the log before its request is
	// answered, so an acknowledged write survives a power loss, not only a
	// crash of the process; the group commit shares one flush among its
	// transactions. NORMAL only by the operator's choice.
	base := "file:" + url.PathEscape(path) + "?_pragma=busy_timeout(" + strconv.FormatInt(busyTimeout.Milliseconds(), 10) + ")&_pragma=foreign_keys(1)&_pragma=synchronous(" + synchronous + ")"
	// temp_store(memory): a multi-row insert's statement journal (bills with
	// their indexes and count trigger) outgrows 64 KB and would spill to a
	// temporary file inside the writer's transaction.
	n := sqliteReaders()
	PrepareSQLite()
	write := sql.OpenDB(cachingConnector{dsn: base + "&_pragma=journal_mode(WAL)&_pragma=temp_store(memory)&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(" + strconv.Itoa(walLimit) + ")&_txlock=immediate" + logVFSFor(synchronous), d: cachingDriver{&sqlite.Driver{}}})
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// readerCacheKiB of page cache per reader (SQLite's default is 2 MB)
	// keeps hot index pages in memory at millions of bills, within the RSS
	// budget.
	read, err := sql.Open("sqlite", base+"&_pragma=query_only(1)&_pragma=cache_size(-"+strconv.Itoa(readerCacheKiB)+")")
	if err != nil {
		write.Close()
		return nil, err
	}
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	read.SetConnMaxIdleTime(0)
	opened, err := os.Stat(path)
	if err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	gate := newReadGate(n)
	ckpt, err := startCheckpointer(base, write, gate, 250*time.Millisecond)
	if err != nil {
		write.Close()
		read.Close()
		return nil, err
	}
	cache := &stmtCache{pool: read}
	b := &binder{dialect: SQLite}
	db := &DB{dialect: SQLite, writes: writeHealth{probing: make(chan struct{}, 1)}, write: write, read: read, reader: runner{q: cache, b: b, gate: gate}, cache: cache, ckpt: ckpt, binder: b,
		sqlitePath: path, sqliteFile: opened}
	db.startGroupWriter()
	return db, nil
}

// PoolRaisedFrom is the pool_max_conns the PostgreSQL address gave when
// it was below the 16 connections the pool keeps, and 0 otherwise: serve
// says so, as the database must then allow more than the operator set.
func (db *DB) PoolRaisedFrom() int32 { return db.poolRaisedFrom }

// poolSizeGiven tells whether a PostgreSQL address sets pool_max_conns
// (pgx's default, without it, is the machine's cores, at least 4).
func poolSizeGiven(dsn string) bool {
	u, err := url.Parse(dsn)
	return err == nil && u.Query().Has("pool_max_conns")
}

// pageReaders is how many pages of rows PostgreSQL's reader runs at once:
// a quarter of the pool (4 of the default 16), so that the pages leave
// the rest of it to the writes and single reads; an operator who sizes the
// pool to a larger database (pool_max_conns) widens it with the pool.
func pageReaders(maxConns int32) int {
	return max(1, int(maxConns)/4)
}

func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres url: %w", err)
	}
	// pgx splits user:password@host at the first @, so the rest of a
	// password holding one became the host, and the refusal printed it
	// ("lookup ssw0rd@127.0.0.1: no such host", an audit).
	hosts := []string{cfg.ConnConfig.Host}
	for _, f := range cfg.ConnConfig.Fallbacks {
		hosts = append(hosts, f.Host)
	}
	for _, h := range hosts {
		if strings.Contains(h, "@") {
			return nil, errors.New("postgres url: more than one @ before the host: percent-encode an @ in the user or password as %40")
		}
	}
	var raisedFrom int32
	if cfg.MaxConns < 16 {
		if poolSizeGiven(dsn) {
			raisedFrom = cfg.MaxConns
		}
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
		if ctx.Err() == nil && pingCtx.Err() != nil {
			// pgx names the server on a refusal, not on a server that takes
			// the connection and never answers: its error was "context
			// deadline exceeded" alone (an audit).
			c := cfg.ConnConfig
			return nil, fmt.Errorf("connect to postgres: user=%s database=%s host=%s: no answer within 10s",
				c.User, c.Database, net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))))
		}
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	b := &binder{dialect: Postgres}
	reader := runner{q: db, b: b, pool: pool, gate: newPageGate(pageReaders(cfg.MaxConns))}
	return &DB{dialect: Postgres, writes: writeHealth{probing: make(chan struct{}, 1)}, write: db, read: db, reader: reader, pool: pool, binder: b,
		writeTurns: newWriteTurns(cfg.MaxConns), poolRaisedFrom: raisedFrom}, nil
}

// Dialect tells which engine this is.
func (db *DB) Dialect() Dialect { return db.dialect }

// SQLDB returns the writer pool, for River's SQLite driver and for tools.
func (db *DB) SQLDB() *sql.DB { return db.write }

// PgxPool returns the pgx pool on PostgreSQL (nil on SQLite), for River.
func (db *DB) PgxPool() *pgxpool.Pool { return db.pool }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return db.read.PingContext(ctx)
}

// Close releases every connection.
func (db *DB) Close() error {
	if db.cache != nil {
		db.cache.close()
	}
	if db.group != nil {
		db.group.close()
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
	if db.ckpt != nil {
		// After every connection: closing it earlier would drop their
		// locks on the -shm file (walIndex).
		db.ckpt.index.close()
	}
	return err
}

// pgxConn is what a pgx connection reached through database/sql offers.
type pgxConn interface{ Conn() *pgx.Conn }

// writer runs single statements on the write pool, outside any
// transaction: each commits on its own.
func (db *DB) writer() runner { return runner{q: db.write, b: db.binder} }
