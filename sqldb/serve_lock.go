package sqldb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ServedElsewhereError says another process serves the SQLite file: two
// servers on one file would each take itself for its only instance (its
// own rate limits, sweeps and group-commit writer).
type ServedElsewhereError struct {
	Path, LockPath string
	Holder         string // "pid 1234 on host x", or "" if the lock file does not say
}

func (e *ServedElsewhereError) Error() string {
	who := "another parcela serve"
	if e.Holder != "" {
		who += " (" + e.Holder + ")"
	}
	return fmt.Sprintf("%s is serving %s (it holds the lock %s): stop it first, or serve another database; "+
		"migrate, company and token run beside it", who, e.Path, e.LockPath)
}

// LockServe takes the lock that lets one process serve the SQLite database
// named by dsn, and holds it until release is called or the process ends
// (the kernel drops a dead process's lock: nothing stale is left behind).
// A second holder is refused with a *ServedElsewhereError. PostgreSQL
// takes no lock: its instances share their limits through the database.
//
// The lock is on the file beside the database, <path>.lock, which is never
// removed: removed at release, a start that had opened it could lock the
// removed file while a third created and locked a new one.
func LockServe(dsn string) (release func(), err error) {
	path, ok := sqlitePath(dsn)
	if !ok {
		return func() {}, nil
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a link to the database locks the database's file
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("database directory %s: %w", filepath.Dir(path), err)
	}
	if err := notADirectory(path); err != nil {
		return nil, err // before its lock file is made beside it
	}
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the database's lock file: %w", err)
	}
	if err := flock(f); err != nil {
		holder, _ := os.ReadFile(lockPath)
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, &ServedElsewhereError{Path: path, LockPath: lockPath, Holder: holderOf(string(holder))}
		}
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	// A server by another hard link to the same file would lock another
	// lock file (oneName; Open refuses it too).
	if err := oneName(path); err != nil {
		f.Close()
		return nil, err
	}
	// Who holds it, for the refusal of the next start: an operator looks
	// for the process by it.
	host, _ := os.Hostname()
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+" "+host+"\n"), 0)
	}
	return func() { f.Close() }, nil
}

// oneName refuses a database file with more than one hard link. SQLite
// names the log and its index after the path (-wal, -shm): a server, or a
// command (migrate, company, token) beside it, by another hard link to the
// same file keeps a log of its own beside the other's, which corrupts the
// database (an audit: a company created by a second name while the server
// wrote left its indexes missing rows). One name for every opener.
func oneName(path string) error {
	if n := hardLinks(path); n > 1 {
		return fmt.Errorf("the database %s has %d hard links: open it by one name (SQLite keeps its log beside the name it was opened by, so two names would keep two logs of one file)", path, n)
	}
	return nil
}

// holderOf reads the lock file's "pid host" line.
func holderOf(s string) string {
	pid, host, _ := strings.Cut(strings.TrimSpace(s), " ")
	if _, err := strconv.Atoi(pid); err != nil {
		return ""
	}
	if host == "" {
		return "pid " + pid
	}
	return "pid " + pid + " on host " + host
}

// sqlitePath is the file a SQLite dsn names, as Open reads it.
func sqlitePath(dsn string) (string, bool) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return "", false
	}
	path, err := sqliteFile(dsn)
	return path, err == nil
}

// SQLitePath is the file a SQLite address names, and false for a
// PostgreSQL address or one that is no SQLite address.
func SQLitePath(dsn string) (string, bool) { return sqlitePath(dsn) }
