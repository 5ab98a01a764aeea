package sqldb

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Opening a SQLite store installs the page pool, and the pages a reader
// caches come from it rather than from one malloc each.
func TestSQLitePagesComeFromThePool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "pool.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if pagePool.slots == 0 {
		t.Fatal("the page pool was not installed")
	}
	if pagePool.size < sqlitePageSize || pagePool.size > sqlitePageSize+1024 {
		t.Fatalf("slot of %d bytes for %d-byte pages", pagePool.size, sqlitePageSize)
	}
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE blobs (b TEXT)`); err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("x", 3000)
	for range 200 { // about 150 pages
		if _, err := db.write.ExecContext(ctx, `INSERT INTO blobs (b) VALUES (?)`, chunk); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := db.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT sum(length(b)) FROM blobs`).Scan(&n); err != nil || n != 200*3000 {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	// The reader holds its pages between statements, so at least those are
	// in use from the pool (other tests' connections add to the count).
	if used, _ := pagePoolUse(); used < 150 {
		t.Fatalf("%d pages of the pool in use after a reader read 150 pages", used)
	}
}

// pagePoolUse reports the pool's pages in use and the bytes of page cache
// allocated outside it (SQLite's process-wide counters).
func pagePoolUse() (used, overflow int64) {
	tls := libc.NewTLS()
	defer tls.Close()
	p := libc.Xmalloc(tls, 16)
	if p == 0 {
		return 0, 0
	}
	defer libc.Xfree(tls, p)
	cur, high := p, p+8
	sqlite3.Xsqlite3_status64(tls, sqlite3.SQLITE_STATUS_PAGECACHE_USED, cur, high, 0)
	used = int64(binary.NativeEndian.Uint64(libc.GoBytes(cur, 8)))
	sqlite3.Xsqlite3_status64(tls, sqlite3.SQLITE_STATUS_PAGECACHE_OVERFLOW, cur, high, 0)
	overflow = int64(binary.NativeEndian.Uint64(libc.GoBytes(cur, 8)))
	return used, overflow
}
