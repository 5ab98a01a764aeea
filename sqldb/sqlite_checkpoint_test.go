package sqldb

import (
	"context"
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
	db, err := Open(ctx, path, nil)
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
