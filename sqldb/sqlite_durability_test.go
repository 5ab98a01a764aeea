package sqldb

import (
	"context"
	"path/filepath"
	"testing"
)

// An acknowledged write must survive a power loss: SQLite in WAL mode with
// synchronous=NORMAL flushes the log only at checkpoints, so the last
// commits before the machine stops can vanish. The writer must sync every
// commit (FULL = 2).
func TestSQLiteWriterSyncsEveryCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "durable.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var mode string
	if err := db.write.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	var sync int
	if err := db.write.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if sync != 2 {
		t.Fatalf("the writer's synchronous = %d; want 2 (FULL): a power loss would drop acknowledged commits", sync)
	}
}

// PARCELA_SQLITE_SYNCHRONOUS=normal, the operator's trade, reaches the
// writer: it syncs at checkpoints only. Anything but full or normal is
// refused (off could corrupt the file at a power loss).
func TestSQLiteSynchronousIsTheOperatorsChoice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for setting, want := range map[string]int{"": 2, "full": 2, "normal": 1} {
		db, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), Config{SQLiteSynchronous: setting})
		if err != nil {
			t.Fatal(err)
		}
		var sync int
		if err := db.write.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil || sync != want {
			t.Errorf("SQLiteSynchronous %q: the writer's synchronous = %d, %v; want %d", setting, sync, err, want)
		}
		db.Close()
	}
	for _, bad := range []string{"off", "extra", "NORMAL ", "1"} {
		if db, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), Config{SQLiteSynchronous: bad}); err == nil {
			db.Close()
			t.Errorf("SQLiteSynchronous %q was taken", bad)
		}
	}
}
