package sqldb

import (
	"encoding/binary"
	"os"
)

// walIndex reads the header SQLite keeps at the start of the "-shm" file
// (the wal-index, mapped by every connection): how many frames the log
// holds, its page size and its salt, which changes at every restart. The
// checkpointer measures the log by it, not by the file's size: a RESTART
// checkpoint leaves the file as long as it was, and the next commit
// writes over it from its start.
//
// The header is read without SQLite's locks, so a read may meet a commit
// half written; the figure only decides when to checkpoint, and the next
// tick reads it again. The file is opened at each read: SQLite deletes it
// when its last connection closes and makes a new one at the next open,
// and a descriptor kept across that would read the old file for ever.
type walIndex struct {
	path string
}

// walIndexHeader is what walIndex reads. SQLite writes the header in the
// machine's byte order: mxFrame at byte 16, szPage at 14 (1 meaning
// 65,536), aSalt[0] at 32; nBackfill, the frames copied into the database
// file, at 96 (WalCkptInfo, after the header's two copies).
type walIndexHeader struct {
	frames, backfilled, salt uint32
	pageSize                 int64
}

// bytes is the log's length in use: its frames with their 24-byte headers.
func (h walIndexHeader) bytes() int64 { return int64(h.frames) * (h.pageSize + 24) }

func (w walIndex) read() (walIndexHeader, bool) {
	f, err := os.Open(w.path)
	if err != nil {
		return walIndexHeader{}, false
	}
	defer f.Close()
	var b [100]byte
	if _, err := f.ReadAt(b[:], 0); err != nil {
		return walIndexHeader{}, false
	}
	h := walIndexHeader{
		frames:     binary.NativeEndian.Uint32(b[16:]),
		backfilled: binary.NativeEndian.Uint32(b[96:]),
		salt:       binary.NativeEndian.Uint32(b[32:]),
		pageSize:   int64(binary.NativeEndian.Uint16(b[14:])),
	}
	if h.pageSize == 1 {
		h.pageSize = 65536
	}
	return h, true
}
