package sqldb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The writer never checkpoints (wal_autocheckpoint(0)); the background
// checkpointer does, so the log is reused instead of growing with every write.
func TestCheckpointerKeepsTheLogShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ckpt.db")
	db, err := Open(ctx, path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE blobs (b TEXT)`); err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("x", 64<<10)
	const rounds, perRound = 20, 16 // 20 MB written in all
	for r := 0; r < rounds; r++ {
		for i := 0; i < perRound; i++ {
			if _, err := db.write.ExecContext(ctx, `INSERT INTO blobs (b) VALUES (?)`, chunk); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.write.ExecContext(ctx, `DELETE FROM blobs`); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // at least one checkpoint tick
	}
	st, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if written := int64(rounds * perRound * len(chunk)); st.Size() > written/4 {
		t.Fatalf("the log holds %d bytes after %d written: it is not being checkpointed", st.Size(), written)
	}
}

// Under sustained writes while readers keep snapshots open, a PASSIVE
// checkpoint never reaches the end of the log; the checkpointer must then
// wait for the readers and truncate, so the log stays bounded.
func TestCheckpointerBoundsTheLogUnderLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bound.db")
	db, err := Open(ctx, path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const limit = 4 << 20
	db.ckpt.limit.Store(limit)
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE blobs (id INTEGER PRIMARY KEY, b TEXT)`); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	readersDone := make(chan struct{})
	go func() { // readers that always hold a snapshot somewhere
		defer close(readersDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			tx, err := db.read.BeginTx(ctx, nil)
			if err != nil {
				continue
			}
			var n int
			_ = tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM blobs`).Scan(&n)
			time.Sleep(20 * time.Millisecond)
			_ = tx.Rollback()
		}
	}()
	chunk := strings.Repeat("y", 32<<10)
	var peak int64
	busy := 0
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 2000 && time.Now().Before(deadline); i++ { // up to 64 MB written
		// A write that meets a truncating checkpoint may wait, and past the
		// busy timeout fail with SQLITE_BUSY; the store reruns such a
		// transaction (errors.go), and so does this loop, a bounded number
		// of times.
		if _, err := db.write.ExecContext(ctx, `INSERT INTO blobs (b) VALUES (?)`, chunk); err != nil {
			var se interface{ Code() int }
			if errors.As(err, &se) && se.Code()&0xff == 5 && busy < 20 {
				busy++
				continue
			}
			t.Fatal(err)
		}
		if i%50 == 49 {
			if _, err := db.write.ExecContext(ctx, `DELETE FROM blobs`); err != nil {
				t.Fatal(err)
			}
		}
		if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > peak {
			peak = st.Size()
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-readersDone
	if db.ckpt.resets.Load() == 0 {
		t.Fatalf("no truncating checkpoint ran (peak log %d bytes)", peak)
	}
	if peak > 3*limit {
		t.Fatalf("the log peaked at %d bytes with a %d-byte limit", peak, limit)
	}
	if db.WALBytes() < 0 {
		t.Fatal("negative log size")
	}
	t.Logf("peak log %d bytes, %d truncating checkpoints, %d busy writes", peak, db.ckpt.resets.Load(), busy)
}
