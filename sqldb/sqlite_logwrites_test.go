package sqldb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// logFileAt is the wrapped log of the database at path, if its writer
// has one open.
func logFileAt(path string) *logFile {
	logVFS.mu.Lock()
	defer logVFS.mu.Unlock()
	for _, f := range logVFS.files {
		if f.path == path+"-wal" {
			return f
		}
	}
	return nil
}

// A store's writer gathers its log writes: a charge-sized transaction
// (dozens of frames, two writes each) reaches the log in a write or two.
func TestSQLiteWriterGathersLogWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gathered.db")
	db, err := Open(ctx, path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v BLOB)`); err != nil {
		t.Fatal(err)
	}
	f := logFileAt(path)
	if f == nil {
		t.Fatal("the writer's log is not gathered")
	}
	asked, made := f.asked.Load(), f.made.Load()
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO t (k, v) VALUES (?, randomblob(1500))`, fmt.Sprint("key-", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	asked, made = f.asked.Load()-asked, f.made.Load()-made
	if asked < 30 || made > 3 {
		t.Errorf("a 60 KB commit: SQLite asked for %d log writes and %d reached the file; want about thirty gathered into one or two", asked, made)
	}
}

// Where a commit does not sync the log (synchronous NORMAL), nothing is
// gathered: the wal-index would make frames visible that are still in
// the buffer.
func TestSQLiteWriterGathersOnlyWhereCommitsSync(t *testing.T) {
	t.Parallel()
	if got := logVFSFor("NORMAL"); got != "" {
		t.Fatalf("NORMAL's writer takes %q", got)
	}
	if got := logVFSFor("FULL"); got != "&vfs="+logVFSName {
		t.Fatalf("FULL's writer takes %q", got)
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "normal.db")
	db, err := Open(ctx, path, Config{SQLiteSynchronous: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE t (v BLOB)`); err != nil {
		t.Fatal(err)
	}
	if logFileAt(path) != nil {
		t.Fatal("a NORMAL writer's log is gathered")
	}
}

// A connection that gathers its log refuses a synchronous setting at
// which a commit would not sync it: the frames could still be in the
// buffer when readers are shown the commit.
func TestSQLiteGatheringWriterRefusesToSkipSyncs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sync.db")
	w := openLogTestDB(t, path, "")
	for _, v := range []string{"OFF", "normal", "0", "1", "yes", "on", "false"} {
		_, err := w.Exec(`PRAGMA synchronous = ` + v)
		if err == nil || !strings.Contains(err.Error(), "needs synchronous FULL") {
			t.Errorf("PRAGMA synchronous = %s: %v; want it refused", v, err)
		}
	}
	for _, v := range []string{"FULL", "extra", "2", "full"} {
		if _, err := w.Exec(`PRAGMA main.synchronous = ` + v); err != nil {
			t.Errorf("PRAGMA synchronous = %s: %v", v, err)
		}
	}
	var level int
	if err := w.QueryRow(`PRAGMA synchronous`).Scan(&level); err != nil || level != 2 {
		t.Fatalf("PRAGMA synchronous reads %d, %v; want 2", level, err)
	}
	if _, err := w.Exec(`CREATE TABLE t (v BLOB)`); err != nil {
		t.Fatal(err)
	}
	if logFileAt(path) == nil {
		t.Fatal("the log is not gathered")
	}
}

// A log on a device without powersafe overwrite is not wrapped: SQLite
// would write part of a commit's last frame after its sync.
func TestSQLiteLogWithoutPowersafeOverwriteIsNotGathered(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "psow.db")
	w := openLogTestDB(t, path, "&psow=0")
	if _, err := w.Exec(`CREATE TABLE t (v BLOB)`); err != nil {
		t.Fatal(err)
	}
	if logFileAt(path) != nil {
		t.Fatal("a log without powersafe overwrite is gathered")
	}
}

func openLogTestDB(t *testing.T, path, extra string) *sql.DB {
	t.Helper()
	PrepareSQLite()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)&_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)&_txlock=immediate"+logVFSFor("FULL")+extra)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// The gathered log holds exactly what SQLite wrote: random transactions
// (rows small and past a page, updates, deletes, savepoints rolled back,
// transactions larger than the writer's cache, which spill frames before
// their commit and rewrite them, checkpoints of every kind) are checked
// after every commit by another connection reading through the plain
// VFS, then after the file is closed and opened again, against what the
// test kept.
func TestSQLiteGatheredLogKeepsWhatSQLiteWrote(t *testing.T) {
	t.Parallel()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "random.db")
			w := openLogTestDB(t, path, "&_pragma=cache_size(40)")
			if _, err := w.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v BLOB)`); err != nil {
				t.Fatal(err)
			}
			if logFileAt(path) == nil {
				t.Fatal("the log is not gathered")
			}
			r, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			rng := rand.New(rand.NewPCG(seed, 99))
			kept := map[int64][]byte{}
			for round := range 40 {
				randomLogTransaction(t, w, rng, kept)
				if round%9 == 8 {
					mode := []string{"PASSIVE", "FULL", "RESTART", "TRUNCATE"}[rng.IntN(4)]
					if _, err := w.Exec(`PRAGMA wal_checkpoint(` + mode + `)`); err != nil {
						t.Fatal(err)
					}
				}
				sameRows(t, r, kept, fmt.Sprint("round ", round))
			}
			var ok string
			if err := w.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
				t.Fatalf("integrity_check: %q, %v", ok, err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			again, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			sameRows(t, again, kept, "reopened")
		})
	}
}

func randomLogTransaction(t *testing.T, w *sql.DB, rng *rand.Rand, kept map[int64][]byte) {
	t.Helper()
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	next := map[int64][]byte{}
	for id, v := range kept {
		next[id] = v
	}
	exec := func(q string, args ...any) {
		if _, err := tx.Exec(q, args...); err != nil {
			t.Fatal(q, err)
		}
	}
	ops := 1 + rng.IntN(20)
	if rng.IntN(8) == 0 {
		ops = 200 // past the writer's 40-page cache: frames spill before the commit
	}
	for range ops {
		switch op := rng.IntN(10); {
		case op < 5 || len(next) == 0:
			v := randomValue(rng)
			var id int64
			if err := tx.QueryRow(`INSERT INTO t (k, v) VALUES (?, ?) RETURNING id`, fmt.Sprint(rng.Uint64()), v).Scan(&id); err != nil {
				t.Fatal(err)
			}
			next[id] = v
		case op < 8:
			id := anyKey(rng, next)
			v := randomValue(rng)
			exec(`UPDATE t SET v = ? WHERE id = ?`, v, id)
			next[id] = v
		case op < 9:
			id := anyKey(rng, next)
			exec(`DELETE FROM t WHERE id = ?`, id)
			delete(next, id)
		default:
			exec(`SAVEPOINT s`)
			exec(`INSERT INTO t (k, v) VALUES (?, randomblob(5000))`, fmt.Sprint("gone-", rng.Uint64()))
			exec(`UPDATE t SET v = randomblob(300)`)
			exec(`ROLLBACK TO s`)
			exec(`RELEASE s`)
		}
	}
	if rng.IntN(6) == 0 {
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	clear(kept)
	for id, v := range next {
		kept[id] = v
	}
}

func randomValue(rng *rand.Rand) []byte {
	n := rng.IntN(200)
	if rng.IntN(5) == 0 {
		n = rng.IntN(12000) // overflow pages
	}
	return randomBytes(rng, n)
}

func randomBytes(rng *rand.Rand, n int) []byte {
	v := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(v[i:], rng.Uint64())
	}
	return v[:n]
}

func anyKey(rng *rand.Rand, m map[int64][]byte) int64 {
	n := rng.IntN(len(m))
	for id := range m {
		if n == 0 {
			return id
		}
		n--
	}
	panic("empty")
}

func sameRows(t *testing.T, db *sql.DB, kept map[int64][]byte, when string) {
	t.Helper()
	rows, err := db.Query(`SELECT id, v FROM t`)
	if err != nil {
		t.Fatal(when, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id int64
		var v []byte
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(when, err)
		}
		n++
		want, ok := kept[id]
		if !ok || !bytes.Equal(v, want) {
			t.Fatalf("%s: row %d reads %x (%d bytes), want %x (%d bytes, kept %v)", when, id, sha256.Sum256(v), len(v), sha256.Sum256(want), len(want), ok)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(when, err)
	}
	if n != len(kept) {
		t.Fatalf("%s: %d rows, want %d", when, n, len(kept))
	}
}

// BenchmarkLogWrites commits a charge-sized transaction (twelve rows of
// a kilobyte with an index, fourteen of two) through the plain VFS and
// through the gathering one, in one process: the writer's CPU for the
// same commit, and how many writes reached the log.
func BenchmarkLogWrites(b *testing.B) {
	for _, vfs := range []string{"plain", "gathered"} {
		b.Run(vfs, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.db")
			dsn := "file:" + path + "?_pragma=synchronous(FULL)&_pragma=journal_mode(WAL)&_txlock=immediate"
			if vfs == "gathered" {
				dsn += logVFSFor("FULL")
			}
			PrepareSQLite()
			w, err := sql.Open("sqlite", dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			w.SetMaxOpenConns(1)
			for _, q := range []string{
				`CREATE TABLE bill (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v BLOB)`,
				`CREATE TABLE event (id INTEGER PRIMARY KEY, v BLOB)`,
			} {
				if _, err := w.Exec(q); err != nil {
					b.Fatal(err)
				}
			}
			var made int64
			if f := logFileAt(path); f != nil {
				made = f.made.Load()
			}
			// The rows' bytes, made once: SQLite's randomblob would cost
			// more than the commit.
			rng := rand.New(rand.NewPCG(1, 2))
			bill, event := randomBytes(rng, 1000), randomBytes(rng, 2000)
			n := 0
			start := ProcessCPU(b)
			for b.Loop() {
				tx, err := w.Begin()
				if err != nil {
					b.Fatal(err)
				}
				for range 12 {
					n++
					if _, err := tx.Exec(`INSERT INTO bill (k, v) VALUES (?, ?)`, strings.Repeat("k", 20)+fmt.Sprint(n), bill); err != nil {
						b.Fatal(err)
					}
				}
				for range 14 {
					if _, err := tx.Exec(`INSERT INTO event (v) VALUES (?)`, event); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(ProcessCPU(b)-start)/float64(b.N), "cpu-ns/op")
			if f := logFileAt(path); f != nil {
				b.ReportMetric(float64(f.made.Load()-made)/float64(b.N), "log-writes/op")
			}
		})
	}
}

// A truncate writes the buffer out first: bytes SQLite wrote below the new
// end are in the file after it, where without the flush the file grew
// with zeros there. SQLite truncates its log only after a commit's sync,
// when the buffer is empty, so this calls the wrapped methods directly,
// on an idle connection's log, past its last frame.
func TestSQLiteGatheredLogWritesOutBeforeTruncate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "truncate.db")
	w := openLogTestDB(t, path, "")
	for _, q := range []string{`CREATE TABLE t (v BLOB)`, `INSERT INTO t VALUES (randomblob(5000))`} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	logVFS.mu.Lock()
	var pFile uintptr
	var f *logFile
	for p, lf := range logVFS.files {
		if lf.path == path+"-wal" {
			pFile, f = p, lf
		}
	}
	logVFS.mu.Unlock()
	if f == nil {
		t.Fatal("the log is not gathered")
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	end := fi.Size()

	tls := libc.NewTLS()
	defer tls.Close()
	const written = "gathered"
	buf := libc.Xmalloc(tls, types.Size_t(len(written)))
	defer libc.Xfree(tls, buf)
	copy(unsafe.Slice((*byte)(cPtr(buf)), len(written)), written)
	if rc := logWrite(tls, pFile, buf, int32(len(written)), end); rc != sqlite3.SQLITE_OK || f.n != int32(len(written)) {
		t.Fatalf("write past the last frame: rc %d, %d bytes gathered", rc, f.n)
	}
	if rc := logTruncate(tls, pFile, end+4); rc != sqlite3.SQLITE_OK {
		t.Fatalf("truncate: rc %d", rc)
	}
	got, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != end+4 || string(got[end:]) != written[:4] {
		t.Fatalf("after a truncate to %d: %d bytes, ending %q, want %q", end+4, len(got), got[min(end, int64(len(got))):], written[:4])
	}
	if rc := logTruncate(tls, pFile, end); rc != sqlite3.SQLITE_OK {
		t.Fatalf("truncate back: rc %d", rc)
	}
	var ok string
	if _, err := w.Exec(`INSERT INTO t VALUES (randomblob(5000))`); err != nil {
		t.Fatal(err)
	}
	if err := w.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity: %q %v", ok, err)
	}
}
