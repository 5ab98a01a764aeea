package sqldb

import (
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// The writer's log writes are gathered: SQLite writes each frame of a
// commit to the write-ahead log as two writes (its 24-byte header, then
// its page), one system call each, while it holds the single writer; a
// charge's commit is dozens of frames, and those calls were a fifth to a
// third of the writer's time. The writer's connection opens its files
// through logVFSName, a VFS that is SQLite's own but for its log file:
// writes that continue one another are copied into a buffer and reach
// the file as one write, before anything else is done with the file.
//
// It is sound only because every commit syncs the log (synchronous FULL):
// a commit becomes visible to readers when SQLite writes the wal-index in
// shared memory, right after walFrames's sync, and the sync writes the
// buffer first. With NORMAL there is no call between the last frame and
// the wal-index, so the writer opens the plain VFS then (logVFSFor), and
// a connection through this VFS refuses to be set below FULL
// (dbFileControl). A
// device without SQLITE_IOCAP_POWERSAFE_OVERWRITE would have SQLite write
// part of a commit's last frame after its sync; such a log is not
// wrapped (the database file's characteristics decide, as SQLite's).
// A crash loses what the buffer held, which no sync had made
// durable, so no commit was acknowledged with it.
const logVFSName = "parcela-log"

// logBufferSize bounds what one log file's buffer gathers, and so one
// write: SQLite's unix VFS writes at most 0x1ffff bytes a call (it masks
// the length with it), 31 frames of 4 KB pages. A charge's commit is
// about 25 frames.
const logBufferSize = 0x1ffff

var logVFS struct {
	once sync.Once
	ok   bool
	base uintptr // the default VFS, whose files these are

	mu    sync.Mutex
	files map[uintptr]*logFile // by sqlite3_file
	wraps map[wrapKey]uintptr  // the wrapping io methods, made once for each kind of file
	psow  map[string]bool      // by database path: its file has powersafe overwrite; one entry a path the process opens
}

// wrapKey names a wrapping of a file's own io methods: the log's
// (wrapLog) or the database file's (dbFileControl).
type wrapKey struct {
	own uintptr
	log bool
}

// logFile is a wrapped log file: its own methods and its buffer, bytes
// [off, off+n) of the file. Only its connection uses it, one call at a
// time; the counts are read by tests.
type logFile struct {
	base  uintptr
	buf   uintptr
	off   int64
	n     int32
	path  string
	asked atomic.Int64 // writes SQLite asked for
	made  atomic.Int64 // writes that reached the file
}

// registerLogVFS registers logVFSName once; false if it could not be.
func registerLogVFS() bool {
	logVFS.once.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		base := sqlite3.Xsqlite3_vfs_find(tls, 0)
		if base == 0 || (*sqlite3.Tsqlite3_vfs)(cPtr(base)).FiVersion < 1 {
			return
		}
		name, err := libc.CString(logVFSName)
		if err != nil {
			return
		}
		size := unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})
		p := libc.Xmalloc(tls, types.Size_t(size))
		if p == 0 {
			return
		}
		v := (*sqlite3.Tsqlite3_vfs)(cPtr(p))
		*v = *(*sqlite3.Tsqlite3_vfs)(cPtr(base))
		v.FpNext, v.FzName, v.FxOpen = 0, name, cFunc(logOpen)
		logVFS.base = base
		logVFS.files = map[uintptr]*logFile{}
		logVFS.wraps = map[wrapKey]uintptr{}
		logVFS.psow = map[string]bool{}
		logVFS.ok = sqlite3.Xsqlite3_vfs_register(tls, p, 0) == sqlite3.SQLITE_OK
	})
	return logVFS.ok
}

// logVFSFor is the "&vfs=…" a writer's address takes at this synchronous
// setting: the gathering VFS only where every commit syncs.
func logVFSFor(synchronous string) string {
	if synchronous != "FULL" || !registerLogVFS() {
		return ""
	}
	return "&vfs=" + logVFSName
}

// cFunc is a Go function as the transpiled SQLite calls a C function
// pointer: the address of its func value (a top-level function's is
// static).
func cFunc[T any](f T) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f})) }

// cPtr is an address SQLite gave (memory of its own allocator, outside
// Go's heap) as a pointer.
func cPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// goFunc is the reverse, to call one of SQLite's own methods.
func goFunc[T any](p uintptr) T { return *(*T)(unsafe.Pointer(&struct{ p uintptr }{p})) }

func ioMethods(p uintptr) *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(cPtr(p))
}

func logOpen(tls *libc.TLS, _, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	base := logVFS.base
	open := goFunc[func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32]((*sqlite3.Tsqlite3_vfs)(cPtr(base)).FxOpen)
	rc := open(tls, base, zName, pFile, flags, pOutFlags)
	own := (*sqlite3.Tsqlite3_file)(cPtr(pFile)).FpMethods
	if rc != sqlite3.SQLITE_OK || own == 0 || zName == 0 {
		return rc
	}
	switch {
	case flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0:
		// SQLite pads a commit to a sector, and writes part of its last
		// frame after the sync, unless the database's file (not its
		// log's) has powersafe overwrite.
		psow := ioMethods(own).FxDeviceCharacteristics != 0 &&
			goFunc[func(*libc.TLS, uintptr) int32](ioMethods(own).FxDeviceCharacteristics)(tls, pFile)&sqlite3.SQLITE_IOCAP_POWERSAFE_OVERWRITE != 0
		logVFS.mu.Lock()
		defer logVFS.mu.Unlock()
		logVFS.psow[libc.GoString(zName)] = psow
		wrap := wrapped(tls, own, false)
		if wrap == 0 {
			return sqlite3.SQLITE_NOMEM
		}
		(*sqlite3.Tsqlite3_file)(cPtr(pFile)).FpMethods = wrap
		return rc
	case flags&sqlite3.SQLITE_OPEN_WAL == 0:
		return rc
	}
	path := libc.GoString(zName)
	logVFS.mu.Lock()
	defer logVFS.mu.Unlock()
	if db, ok := strings.CutSuffix(path, "-wal"); !ok || !logVFS.psow[db] {
		return rc
	}
	buf := libc.Xmalloc(tls, logBufferSize)
	if buf == 0 {
		return rc
	}
	wrap := wrapped(tls, own, true)
	if wrap == 0 {
		libc.Xfree(tls, buf)
		return rc
	}
	logVFS.files[pFile] = &logFile{base: own, buf: buf, path: path}
	(*sqlite3.Tsqlite3_file)(cPtr(pFile)).FpMethods = wrap
	return rc
}

// dbFileControl refuses, on a database opened through logVFSName, a
// PRAGMA synchronous that would let a commit skip its sync of the log:
// its frames could then still be in the buffer when the wal-index shows
// the commit (the benchmark's seeding, which set synchronous=OFF on the
// writer, read a malformed file back). SQLite asks the file about every
// PRAGMA before it runs it, and takes an error with its message.
func dbFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	own := ownMethods((*sqlite3.Tsqlite3_file)(cPtr(pFile)).FpMethods)
	if op == sqlite3.SQLITE_FCNTL_PRAGMA {
		az := (*[3]uintptr)(cPtr(pArg))
		if az[1] != 0 && az[2] != 0 && strings.EqualFold(libc.GoString(az[1]), "synchronous") && !syncsEveryCommit(libc.GoString(az[2])) {
			az[0] = sqliteString(tls, "this connection gathers its log writes (the "+logVFSName+" VFS), which needs synchronous FULL or EXTRA")
			return sqlite3.SQLITE_ERROR
		}
	}
	return goFunc[func(*libc.TLS, uintptr, int32, uintptr) int32](ioMethods(own).FxFileControl)(tls, pFile, op, pArg)
}

// syncsEveryCommit reports whether a PRAGMA synchronous value is one at
// which every commit syncs the log (FULL, EXTRA); a value SQLite would
// read otherwise, or not at all, is not.
func syncsEveryCommit(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "full", "extra", "2", "3":
		return true
	}
	return false
}

// sqliteString is s in memory SQLite frees with sqlite3_free.
func sqliteString(tls *libc.TLS, s string) uintptr {
	p := sqlite3.Xsqlite3_malloc(tls, int32(len(s)+1))
	if p == 0 {
		return 0
	}
	b := unsafe.Slice((*byte)(cPtr(p)), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return p
}

// wrapped is the log's (log) or the database file's wrapping of the io
// methods at own, made at its first use and kept for the process; 0 if it
// could not be allocated. The caller holds logVFS.mu.
func wrapped(tls *libc.TLS, own uintptr, log bool) uintptr {
	k := wrapKey{own, log}
	if wrap, ok := logVFS.wraps[k]; ok {
		return wrap
	}
	edit := wrapLog
	if !log {
		edit = func(m *sqlite3.Tsqlite3_io_methods) { m.FxFileControl = cFunc(dbFileControl) }
	}
	wrap := wrapMethods(tls, own, edit)
	if wrap != 0 {
		logVFS.wraps[k] = wrap
	}
	return wrap
}

// methodsSize is the size of an io methods table; a wrapping one is
// followed by the address of the methods it wraps (ownMethods).
const methodsSize = unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})

// wrapMethods is a copy of the io methods at own, in SQLite's memory,
// changed by edit, with own after it; 0 if it could not be allocated.
func wrapMethods(tls *libc.TLS, own uintptr, edit func(*sqlite3.Tsqlite3_io_methods)) uintptr {
	wrap := libc.Xmalloc(tls, types.Size_t(methodsSize+unsafe.Sizeof(own)))
	if wrap != 0 {
		*ioMethods(wrap) = *ioMethods(own)
		edit(ioMethods(wrap))
		*(*uintptr)(cPtr(wrap + methodsSize)) = own
	}
	return wrap
}

// ownMethods is the address of the io methods that the wrapping ones at
// wrap wrap: read without a lock, as the wrapping never changes.
func ownMethods(wrap uintptr) uintptr { return *(*uintptr)(cPtr(wrap + methodsSize)) }

// wrapLog gives a log file the methods that gather its writes and write
// them out before any other call.
func wrapLog(m *sqlite3.Tsqlite3_io_methods) {
	m.FxClose, m.FxRead, m.FxWrite = cFunc(logClose), cFunc(logRead), cFunc(logWrite)
	m.FxTruncate, m.FxSync, m.FxFileSize = cFunc(logTruncate), cFunc(logSync), cFunc(logFileSize)
	m.FxFileControl = cFunc(logFileControl)
	if m.FiVersion >= 3 && m.FxFetch != 0 {
		m.FxFetch = cFunc(logFetch)
	}
}

func logFileOf(pFile uintptr) *logFile {
	logVFS.mu.Lock()
	defer logVFS.mu.Unlock()
	return logVFS.files[pFile]
}

// flushed is the log file at pFile with its buffer written out, and the
// write's result.
func flushed(tls *libc.TLS, pFile uintptr) (*logFile, int32) {
	f := logFileOf(pFile)
	return f, f.flush(tls, pFile)
}

// flush writes what the buffer holds. The buffer is emptied even when the
// write fails: SQLite rolls the transaction back on the error, and writes
// its frames again.
func (f *logFile) flush(tls *libc.TLS, pFile uintptr) int32 {
	if f.n == 0 {
		return sqlite3.SQLITE_OK
	}
	n := f.n
	f.n = 0
	f.made.Add(1)
	return goFunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](ioMethods(f.base).FxWrite)(tls, pFile, f.buf, n, f.off)
}

func logWrite(tls *libc.TLS, pFile, pBuf uintptr, amt int32, off int64) int32 {
	f := logFileOf(pFile)
	f.asked.Add(1)
	switch end := f.off + int64(f.n); {
	case f.n > 0 && off >= f.off && off+int64(amt) <= end:
		// A frame rewritten within the transaction.
		libc.Xmemcpy(tls, f.buf+uintptr(off-f.off), pBuf, types.Size_t(amt))
		return sqlite3.SQLITE_OK
	case f.n > 0 && off == end && int64(f.n)+int64(amt) <= logBufferSize:
		libc.Xmemcpy(tls, f.buf+uintptr(f.n), pBuf, types.Size_t(amt))
		f.n += amt
		return sqlite3.SQLITE_OK
	}
	if rc := f.flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	if amt > logBufferSize || amt < 0 {
		f.made.Add(1)
		return goFunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](ioMethods(f.base).FxWrite)(tls, pFile, pBuf, amt, off)
	}
	libc.Xmemcpy(tls, f.buf, pBuf, types.Size_t(amt))
	f.off, f.n = off, amt
	return sqlite3.SQLITE_OK
}

func logRead(tls *libc.TLS, pFile, pBuf uintptr, amt int32, off int64) int32 {
	f, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](ioMethods(f.base).FxRead)(tls, pFile, pBuf, amt, off)
}

func logTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	f, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int64) int32](ioMethods(f.base).FxTruncate)(tls, pFile, size)
}

func logSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	f, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int32) int32](ioMethods(f.base).FxSync)(tls, pFile, flags)
}

func logFileSize(tls *libc.TLS, pFile, pSize uintptr) int32 {
	f, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, uintptr) int32](ioMethods(f.base).FxFileSize)(tls, pFile, pSize)
}

func logFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	f, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int32, uintptr) int32](ioMethods(f.base).FxFileControl)(tls, pFile, op, pArg)
}

func logFetch(tls *libc.TLS, pFile uintptr, off int64, amt int32, pp uintptr) int32 {
	f, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	return goFunc[func(*libc.TLS, uintptr, int64, int32, uintptr) int32](ioMethods(f.base).FxFetch)(tls, pFile, off, amt, pp)
}

func logClose(tls *libc.TLS, pFile uintptr) int32 {
	f := logFileOf(pFile)
	rc := f.flush(tls, pFile)
	if closed := goFunc[func(*libc.TLS, uintptr) int32](ioMethods(f.base).FxClose)(tls, pFile); rc == sqlite3.SQLITE_OK {
		rc = closed
	}
	logVFS.mu.Lock()
	delete(logVFS.files, pFile)
	logVFS.mu.Unlock()
	libc.Xfree(tls, f.buf)
	return rc
}
