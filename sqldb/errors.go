package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"

	"parcela"
)

// The store's error boundary. Every exported method passes its error
// through failed, once: the domain's own errors (*parcela.Error, and
// *parcela.Conflict for a guarded write that lost) go out as they are, a
// driver's error is read by its code (never its text), and anything else is
// wrapped with the operation that failed, so it surfaces as a 500 that says
// where, never as a 4xx it is not.

// Driver error codes the store acts on.
const (
	sqliteBusy             = 5    // SQLITE_BUSY (primary code; extended codes keep it in the low byte)
	sqliteLocked           = 6    // SQLITE_LOCKED
	sqliteReadOnly         = 8    // SQLITE_READONLY
	sqliteIOErr            = 10   // SQLITE_IOERR
	sqliteFull             = 13   // SQLITE_FULL: the disk (or max_page_count) is full
	sqliteCantOpen         = 14   // SQLITE_CANTOPEN
	sqliteUniqueConstraint = 2067 // SQLITE_CONSTRAINT_UNIQUE
	sqlitePrimaryKey       = 1555 // SQLITE_CONSTRAINT_PRIMARYKEY
	pgUniqueViolation      = "23505"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	pgReadOnlyTransaction  = "25006" // a standby, or default_transaction_read_only
	pgLockNotAvailable     = "55P03" // lock_timeout, on the role or in the URL
	pgQueryCanceled        = "57014" // statement_timeout, or pg_cancel_backend
	pgAdminShutdown        = "57P0"  // 57P01 admin, 57P02 crash shutdown, 57P03 cannot connect now
	pgConnectionClass      = "08"    // connection exceptions
	pgResourcesClass       = "53"    // insufficient resources: disk full, out of memory, too many connections
	pgSystemClass          = "58"    // system errors: I/O
)

// driverError classifies an error by the driver's code.
type driverError int

const (
	otherError driverError = iota
	uniqueViolation
	transient   // worth running the transaction again
	unavailable // the database cannot take work now (full, read-only, failing, unreachable): 503, retry later
	timedOut    // an operator's lock_timeout or statement_timeout ended a statement: 503 too, but no sign the database fails writes
)

func classify(err error) driverError {
	if se, ok := errors.AsType[*sqlite.Error](err); ok {
		switch code := se.Code(); {
		case code == sqliteUniqueConstraint || code == sqlitePrimaryKey:
			return uniqueViolation
		case sqliteLockTaken(code):
			return transient
		case code&0xff == sqliteReadOnly || code&0xff == sqliteIOErr || code&0xff == sqliteFull || code&0xff == sqliteCantOpen:
			return unavailable
		}
	}
	// No connection was made: a server that does not answer, or one that
	// refuses the connection itself (its database dropped, the role
	// removed or its password rotated: a FATAL PgError inside), an
	// outage either way (an audit: those answered 500).
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return unavailable
	}
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch c := pe.Code; {
		case c == pgUniqueViolation:
			return uniqueViolation
		case c == pgSerializationFailure || c == pgDeadlockDetected:
			return transient
		case c == pgLockNotAvailable || c == pgQueryCanceled:
			// An operator's timeout ended a statement that waited on
			// another session's lock or on a slow server: the transaction
			// did nothing, and running it again at once would wait the
			// same; what the write timeout's end answers (503, retry).
			return timedOut
		case c == pgReadOnlyTransaction || strings.HasPrefix(c, pgAdminShutdown) || strings.HasPrefix(c, pgConnectionClass) ||
			strings.HasPrefix(c, pgResourcesClass) || strings.HasPrefix(c, pgSystemClass):
			return unavailable
		}
		return otherError
	}
	// No server answered: a lost connection.
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return unavailable
	}
	// pgx's "conn closed": a step (a commit, a rollback, a statement)
	// asked of a connection that an earlier one found dropped.
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) {
		return unavailable
	}
	return otherError
}

// sqliteLockTaken tells SQLITE_BUSY or SQLITE_LOCKED (extended codes keep
// the primary in the low byte): a lock another connection held past the
// busy timeout.
func sqliteLockTaken(code int) bool {
	return code&0xff == sqliteBusy || code&0xff == sqliteLocked
}

// failed is the boundary itself: op names what the store was doing.
func failed(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*parcela.Error](err); ok {
		return err
	}
	if _, ok := errors.AsType[*parcela.Conflict](err); ok {
		return err
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return parcela.Errorf(parcela.ENOTFOUND, "%s: not found", op)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, err)
	}
	switch classify(err) {
	case uniqueViolation:
		// A racing insert took the row's place: like a guarded write that
		// lost, the caller reads again.
		return &parcela.Conflict{Entity: op, ID: "unique"}
	case unavailable, timedOut:
		return &parcela.Error{Code: parcela.EUNAVAILABLE, Message: "the database cannot take requests right now; retry later",
			Cause: fmt.Errorf("%s: %w", op, err)}
	case transient:
		// Still a deadlock, a serialization failure or SQLITE_BUSY after
		// inTx ran it txAttempts times: concurrent transactions kept
		// colliding and nothing was kept. As a use case that lost its
		// rounds of decisions (decideAndApply), a 409 conflict its client
		// retries, never a 500, and never stored under an Idempotency-Key.
		msg := "concurrent requests kept colliding in the database; nothing was done; retry"
		if se, ok := errors.AsType[*sqlite.Error](err); ok && sqliteLockTaken(se.Code()) {
			// This process writes through one connection, so what held
			// SQLite's write lock past every wait is another process (a
			// backup, a shell) or a checkpoint: no concurrent request of
			// the client's to blame (an audit held it from a shell).
			msg = "the database's write lock stayed taken by another process or a checkpoint; nothing was done; retry"
		}
		return &parcela.Error{Code: parcela.ECONFLICT, Message: msg, Cause: fmt.Errorf("%s: %w", op, err)}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// notFound maps a missing row to the domain's not-found error for what.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return parcela.NotFound(what)
	}
	return err
}
