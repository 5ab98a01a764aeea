package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The wal-index's header counts the log's frames as SQLite's own
// checkpoint reports them; after a RESTART it still counts them, all
// copied, until the next commit writes the log again from its start, over
// the file's blocks: the file neither shrinks nor grows.
func TestWALIndexCountsTheLogsFrames(t *testing.T) {
	t.Parallel()
	for _, pageSize := range []int{4096, 65536} {
		t.Run(fmt.Sprint(pageSize), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "index.db")
			db, err := sql.Open("sqlite", "file:"+url.PathEscape(path)+"?_pragma=wal_autocheckpoint(0)")
			if err != nil {
				t.Fatal(err)
			}
			// Closed after the database, deferred before it (walIndex).
			index := &walIndex{path: path + "-shm"}
			defer index.close()
			defer db.Close()
			db.SetMaxOpenConns(1)
			// The page size is set before the file's first page is written.
			for _, q := range []string{fmt.Sprintf(`PRAGMA page_size = %d`, pageSize), `PRAGMA journal_mode = WAL`, `CREATE TABLE blobs (b TEXT)`} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			for range 20 {
				if _, err := db.ExecContext(ctx, `INSERT INTO blobs (b) VALUES (?)`, strings.Repeat("w", 10_000)); err != nil {
					t.Fatal(err)
				}
			}
			before, ok := index.read()
			if !ok {
				t.Fatal("the wal-index could not be read")
			}
			checkpoint := func(mode string) (logFrames, copied int64) {
				var busy int64
				if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &logFrames, &copied); err != nil || busy != 0 {
					t.Fatalf("%s checkpoint: busy %d, %v", mode, busy, err)
				}
				return logFrames, copied
			}
			logFrames, _ := checkpoint("PASSIVE")
			if int64(before.frames) != logFrames || before.pageSize != int64(pageSize) {
				t.Fatalf("header: %d frames of %d bytes; SQLite: %d frames of %d", before.frames, before.pageSize, logFrames, pageSize)
			}
			st, err := os.Stat(path + "-wal")
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != 32+before.bytes() {
				t.Fatalf("%d bytes of frames counted, the file has %d (32 of them its header)", before.bytes(), st.Size())
			}

			checkpoint("RESTART")
			restarted, _ := index.read()
			if restarted.salt != before.salt || restarted.frames != before.frames || restarted.backfilled != restarted.frames {
				t.Fatalf("after the RESTART, before any commit: %+v, was %+v", restarted, before)
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO blobs (b) VALUES ('short')`); err != nil {
				t.Fatal(err)
			}
			after, _ := index.read()
			if after.salt == before.salt || after.frames == 0 || after.frames >= before.frames {
				t.Fatalf("the commit after the RESTART did not start the log again: %+v, was %+v", after, before)
			}
			if st2, err := os.Stat(path + "-wal"); err != nil || st2.Size() != st.Size() {
				t.Fatalf("the log's file went from %d to %v bytes (%v)", st.Size(), st2.Size(), err)
			}
		})
	}
}

// The checkpointer reads a restarted log as empty until its next commit,
// which writes over the file's start.
func TestCheckpointerMeasuresARestartedLogAsEmpty(t *testing.T) {
	t.Parallel()
	ctx, db, path := openBlobs(t, 64<<20)
	// The loop stopped, the test runs the checkpointer's steps itself.
	db.ckpt.cancel()
	<-db.ckpt.done
	chunk := strings.Repeat("m", 32<<10)
	for range 64 { // 2 MB
		if _, err := db.write.ExecContext(ctx, `INSERT INTO blobs (b) VALUES (?)`, chunk); err != nil {
			t.Fatal(err)
		}
	}
	full := db.ckpt.measure()
	st, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if full < 2<<20 || full+32 != st.Size() {
		t.Fatalf("the log measures %d bytes, its file has %d", full, st.Size())
	}
	if !db.ckpt.restart(ctx, restartWait, false) {
		t.Fatal("the RESTART did not empty the log")
	}
	if n := db.ckpt.measure(); n != 0 {
		t.Fatalf("the restarted log, with no commit since, measures %d bytes", n)
	}
	if _, err := db.write.ExecContext(ctx, `INSERT INTO blobs (b) VALUES (?)`, chunk); err != nil {
		t.Fatal(err)
	}
	if n := db.ckpt.measure(); n <= 0 || n >= full/4 {
		t.Fatalf("after one commit the log measures %d bytes (%d before the restart)", n, full)
	}
	if st2, err := os.Stat(path + "-wal"); err != nil || st2.Size() != st.Size() {
		t.Fatalf("the log's file went from %d to %v bytes (%v)", st.Size(), st2.Size(), err)
	}
}

// SQLite deletes the "-shm" file when its last connection closes and makes
// a new one at the next open: the wal-index is read from the file as it is
// now, not from one opened before.
func TestWALIndexReadsTheSHMFileOfNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "again.db")
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+url.PathEscape(path)+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		return db
	}
	write := func(db *sql.DB, rows int) {
		for range rows {
			if _, err := db.ExecContext(ctx, `INSERT INTO blobs (b) VALUES (?)`, strings.Repeat("s", 10_000)); err != nil {
				t.Fatal(err)
			}
		}
	}
	db := open()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS blobs (b TEXT)`); err != nil {
		t.Fatal(err)
	}
	write(db, 20)
	index := &walIndex{path: path + "-shm"}
	defer index.close() // after the database's last Close below
	before, ok := index.read()
	if !ok || before.frames < 40 {
		t.Fatalf("before: %+v, %v", before, ok)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	defer db.Close()
	write(db, 1)
	after, ok := index.read()
	if !ok || after.frames == 0 || after.frames >= before.frames {
		t.Fatalf("after the last connection closed and one row was written: %+v (was %+v), %v", after, before, ok)
	}
}
