package sqldb

import (
	"encoding/binary"
	"runtime"
	"sync"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// The page pool gives SQLite's page caches their memory from one block
// allocated once, instead of a malloc per page. In WAL mode a connection
// empties its whole page cache whenever another connection has committed
// since its last read (River's leader alone commits every five seconds),
// and modernc's allocator hands a freed page's memory back to the system
// (madvise) and faults it in again on the next read: that churn was a
// third of a bill's GET in a profile under load. Pages from the pool go
// back to the pool. Each page also costs its own size plus SQLite's header
// (about 4.4 KB) rather than the allocator's 8 KB size class, so the pool
// holds the readers' caches in a little over half the memory.
var pagePool struct {
	once  sync.Once
	slots int // 0 when the pool could not be installed
	size  int
}

// PrepareSQLite installs the page pool, if it is not yet: the store does
// it as it opens SQLite. A process that also opens SQLite by itself (a
// test, a tool) calls it first: SQLite takes the setting only before its
// first connection, and a connection opened while it is being set is a
// data race in SQLite's configuration.
func PrepareSQLite() {
	// The readers' caches, the writer's and the checkpointer's (SQLite's
	// default 2 MB each).
	setupPagePool(sqliteReaders()*readerCacheKiB + 2*2000)
}

// sqliteReaders is how many connections a store's SQLite reader pool
// holds.
func sqliteReaders() int { return max(4, runtime.GOMAXPROCS(0)*2) }

// pagePoolMaxBytes bounds the pool, which is touched when it is set up;
// pages beyond it come from malloc as before.
const pagePoolMaxBytes = 128 << 20

// setupPagePool installs the pool for caches of kib KiB in all, sized for
// 4 KB pages. It must run before the process opens its first SQLite
// connection (SQLite refuses the setting once initialized); it runs once,
// and a refusal leaves SQLite's own allocation in place.
func setupPagePool(kib int) {
	pagePool.once.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		hdr := libc.Xmalloc(tls, 8)
		if hdr == 0 {
			return
		}
		defer libc.Xfree(tls, hdr)
		libc.Xmemset(tls, hdr, 0, 8)
		if !sqliteConfig(tls, sqlite3.SQLITE_CONFIG_PCACHE_HDRSZ, hdr) {
			return
		}
		size := (sqlitePageSize + int(int32(binary.NativeEndian.Uint32(libc.GoBytes(hdr, 4)))) + 7) &^ 7
		// A quarter more than the caches hold: with fewer than ten slots
		// free SQLite deems memory short, and a write transaction then
		// spills its dirty pages to the log before it commits.
		slots := min(kib<<10*5/4, pagePoolMaxBytes) / size
		buf := libc.Xmalloc(tls, types.Size_t(slots*size))
		if buf == 0 {
			return
		}
		if !sqliteConfig(tls, sqlite3.SQLITE_CONFIG_PAGECACHE, buf, int32(size), int32(slots)) {
			libc.Xfree(tls, buf)
			return
		}
		pagePool.slots, pagePool.size = slots, size
	})
}

// sqlitePageSize is the page size of the databases parcela creates
// (SQLite's default); a larger page would not fit a slot and would come
// from malloc.
const sqlitePageSize = 4096

func sqliteConfig(tls *libc.TLS, op int32, args ...any) bool {
	va := libc.NewVaList(args...)
	if va == 0 {
		return false
	}
	defer libc.Xfree(tls, va)
	return sqlite3.Xsqlite3_config(tls, op, va) == sqlite3.SQLITE_OK
}
