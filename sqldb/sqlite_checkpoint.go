package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// walLimit bounds SQLite's write-ahead log. Past a quarter of it the
// checkpointer restarts the log with a RESTART checkpoint, which waits
// restartWait at most for the readers that pin old frames; past three
// quarters it first holds new reads back at the read gate until the reads
// under way end (drainWait at most), then restarts; failing that, it
// waits for the readers up to busyTimeout, and again at the next tick if
// they outlast it. The writer's journal_size_limit is the same figure: a
// restarted log longer than it is cut to it.
const walLimit = 64 << 20

// walWatch is how often the log's size is looked at. Charges write about
// 40 MB of log a second on this project's benchmark machine; a restarting
// checkpoint, once pending, holds new writers back, so the log's peak is
// walLimit/4 plus what a walWatch of writes adds; while a reader holds a
// snapshot longer than restartWait, three quarters of walLimit plus as
// much.
const walWatch = 25 * time.Millisecond

// busyTimeout is how long a connection waits for a lock another holds:
// in practice the writer, for another process's write.
const busyTimeout = 10 * time.Second

// restartWait is how long a restarting checkpoint, holding the writer,
// waits for the readers of older snapshots while the log is under three
// quarters of walLimit. A request's read takes milliseconds; a longer
// read (a sweep's scan, say) is waited for by the log, which grows
// meanwhile, not by every write: waiting busyTimeout, one 3 s read held
// every write for 3 s.
const restartWait = 50 * time.Millisecond

// drainWait bounds how long a checkpoint near the bound, holding the
// writer, waits for the reads under way to end while it holds new ones
// back at the read gate. A request's read takes milliseconds, a sweep's
// scan of a million bills about a third of a second.
const drainWait = time.Second

// walCheckpointer copies SQLite's write-ahead log into the database file
// from its own connection, in the background. Left to SQLite, the commit
// that crosses 1,000 WAL pages runs the checkpoint, with its fsyncs, while
// holding the single writer: every write waits behind it. A PASSIVE
// checkpoint here waits for nobody and nobody waits for it; but under
// sustained writes and reads it never reaches the end of the log, so the
// log would grow without bound. When the log passes a quarter of walLimit
// the next checkpoint is a RESTART, which holds the writer and waits for
// old readers: briefly (restartWait) until the log reaches three quarters
// of walLimit. A PASSIVE checkpoint just before a brief one does the
// copying beside the writer, so the RESTART copies only what came
// meanwhile.
//
// RESTART, not TRUNCATE: the next commit writes the log again from its
// start, over blocks the file already has. A TRUNCATE also cut the file
// to nothing, which cost the writer twice as long per checkpoint (about
// 37 ms against 17 on the benchmark machine), and every commit after it
// grew the file again, each flush then a metadata change too. The log is
// measured by the frames it holds (walIndex), since the file keeps its
// length; the file is at most the longest the log was, and
// journal_size_limit cuts it back to walLimit at a restart.
//
// Near the bound, waiting for the readers is not enough: SQLite's
// checkpoint waits for the reader slot it first found pinning an old
// frame, and a connection that ends one read and begins the next takes
// that slot again within microseconds, with a current frame but the same
// lock, so a busy pool can keep the checkpoint, and the writer it holds,
// waiting the whole busyTimeout. There the checkpointer takes the whole
// read gate first: no read of this process begins until the log is
// restarted, and those under way end.
type walCheckpointer struct {
	conn      *sql.DB
	writer    *sql.DB   // the single writer connection, for restarting
	gate      *readGate // the reader pool's gate, drained near the bound
	index     *walIndex // where the log's length is read: the "-shm" file's header
	cancel    context.CancelFunc
	done      chan struct{}
	limit     atomic.Int64 // walLimit; smaller in tests
	drainFor  atomic.Int64 // drainWait in nanoseconds; shorter in tests
	fullWait  atomic.Int64 // busyTimeout in nanoseconds, the wait near the bound; shorter in tests
	size      atomic.Int64 // the log's size at the last tick, for the metric
	resets    atomic.Int64 // RESTART checkpoints that emptied the log
	blocked   atomic.Int64 // RESTART checkpoints that did not empty the log (a reader in the way, or an error)
	drained   atomic.Int64 // RESTART checkpoints that emptied the log with the reads drained
	undrained atomic.Int64 // drains given up after drainWait (a read outlasted it)
	// restarted is the log's salt and frames when a RESTART emptied it:
	// until the next commit writes it again from its start, the header
	// still counts the old frames, which are all copied and free.
	restarted walIndexHeader
	// briefOff skips the brief RESTART below the bound (tests only): a
	// slow machine's brief one can find a gap between reads and keep the
	// log short, so the drain near the bound would go untested.
	briefOff atomic.Bool
	// noDrainUntil: after a drain gave up, the next ones wait for a
	// busyTimeout, so a long read stalls the others once, not at every
	// tick. Only the checkpointer's goroutine uses it.
	noDrainUntil time.Time
}

func startCheckpointer(dsn string, writer *sql.DB, gate *readGate, every time.Duration) (*walCheckpointer, error) {
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	c := &walCheckpointer{conn: conn, writer: writer, gate: gate, index: &walIndex{path: dbPathOf(dsn) + "-shm"}, cancel: cancel, done: make(chan struct{})}
	c.limit.Store(walLimit)
	c.drainFor.Store(int64(drainWait))
	c.fullWait.Store(int64(busyTimeout))
	go func() {
		defer close(c.done)
		// The log is measured often (a read of the wal-index is cheap) so
		// that a burst of writes meets a restarting checkpoint within
		// walWatch; the passive
		// one runs every `every`.
		t := time.NewTicker(walWatch)
		defer t.Stop()
		last := time.Now()
		// A brief RESTART that gave up on a long reader is tried again
		// after backoff, doubling up to every: a reader of seconds costs
		// the writer about one restartWait in every 300 ms, not one per
		// tick.
		var retry time.Time
		backoff := walWatch
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			size, limit := c.measure(), c.limit.Load()
			near := size > limit*3/4 // near the bound: wait for the readers, and copy nothing first
			switch {
			case near || size > limit/4 && !c.briefOff.Load() && !time.Now().Before(retry):
				wait := time.Duration(c.fullWait.Load())
				if !near {
					c.checkpoint(ctx, "PASSIVE")
					wait = restartWait
				}
				if c.restart(ctx, wait, near) {
					c.resets.Add(1)
					backoff = walWatch
				} else {
					c.blocked.Add(1)
					retry = time.Now().Add(backoff)
					backoff = min(2*backoff, every)
				}
				c.measure()
				last = time.Now()
			case time.Since(last) >= every:
				c.checkpoint(ctx, "PASSIVE")
				last = time.Now()
			}
		}
	}()
	return c, nil
}

// checkpoint runs one checkpoint. An error (the file busy, say) is retried
// at the next tick.
func (c *walCheckpointer) checkpoint(ctx context.Context, mode string) {
	_, _ = c.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`)
	c.measure()
}

// restart runs a RESTART checkpoint on the writer's own connection: it
// queues behind the transaction under way like any write, instead of
// polling for SQLite's write lock, which a busy writer takes back within
// microseconds of each commit. It waits at most wait for readers, and
// reports whether the log was emptied (the next commit writes it from its
// start). With drain, it first holds the read gate (drainWait at most) and
// restarts with no read of this process under way; if that fails (a
// reader of another process, say), it lets the reads go and waits for the
// readers as without. A drain that gives up is not tried again for a
// busyTimeout.
func (c *walCheckpointer) restart(ctx context.Context, wait time.Duration, drain bool) bool {
	conn, err := c.writer.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	// Restored whatever happens next: the setting may have been applied
	// even when its Exec reports the context's end.
	defer func() {
		if _, err := conn.ExecContext(context.Background(), `PRAGMA busy_timeout = `+strconv.FormatInt(busyTimeout.Milliseconds(), 10)); err != nil {
			// A writer left with the short wait would fail writes that
			// another process delays: the pool opens a fresh connection.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	// The gate is taken after the writer, and for drainWait at most: a
	// read that waits for a write while it holds its slot delays the
	// checkpoint, never blocks it.
	if drain && c.gate != nil && !time.Now().Before(c.noDrainUntil) {
		if c.drain(ctx) {
			ok := c.restartOn(ctx, conn, restartWait)
			c.gate.sem.Release(c.gate.n)
			if ok {
				c.drained.Add(1)
				return true
			}
		} else if ctx.Err() == nil {
			c.undrained.Add(1)
			c.noDrainUntil = time.Now().Add(busyTimeout)
		}
	}
	return c.restartOn(ctx, conn, wait)
}

// drain takes the whole read gate, waiting drainWait at most for the
// reads under way; new reads queue behind it meanwhile.
func (c *walCheckpointer) drain(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(c.drainFor.Load()))
	defer cancel()
	return c.gate.sem.Acquire(ctx, c.gate.n) == nil
}

// restartOn runs the RESTART checkpoint on conn, waiting at most wait for
// readers, and reports whether the log was emptied.
func (c *walCheckpointer) restartOn(ctx context.Context, conn *sql.Conn, wait time.Duration) bool {
	if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = `+strconv.FormatInt(wait.Milliseconds(), 10)); err != nil {
		return false
	}
	var busy, frames, copied int64
	err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(RESTART)`).Scan(&busy, &frames, &copied)
	if err != nil || busy != 0 {
		return false
	}
	// Read while the writer is still held: no commit can have restarted
	// the log yet.
	if h, ok := c.index.read(); ok {
		c.restarted = h
	}
	return true
}

// measure reads the log's length in use from the wal-index: 0 after a
// restart until the next commit, and 0 when it cannot be read (no log
// yet, say).
func (c *walCheckpointer) measure() int64 {
	var n int64
	if h, ok := c.index.read(); ok {
		if h.salt != c.restarted.salt || h.frames != c.restarted.frames || h.backfilled != h.frames {
			n = h.bytes()
		}
	}
	c.size.Store(n)
	return n
}

// stop ends the loop; a last checkpoint leaves the log's file empty for
// the next start.
func (c *walCheckpointer) stop() error {
	c.cancel()
	<-c.done
	_, _ = c.conn.ExecContext(context.Background(), `PRAGMA wal_checkpoint(TRUNCATE)`)
	return c.conn.Close()
}

// dbPathOf finds the database's file from a "file:PATH?…" data source name.
func dbPathOf(dsn string) string {
	p, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	return p
}

// Checkpoints is what the SQLite checkpointer has done, for the
// operations listener's metrics (ok false on PostgreSQL): the log's length
// in use as last measured; the RESTART checkpoints that emptied the log and
// that gave up (a reader in the way, or an error); and near the log's
// bound, those that emptied it with the reads drained, and the drains
// that gave up on a read.
func (db *DB) Checkpoints() (c CheckpointStats, ok bool) {
	if db.ckpt == nil {
		return CheckpointStats{}, false
	}
	return CheckpointStats{
		WALBytes:  db.ckpt.size.Load(),
		Emptied:   db.ckpt.resets.Load(),
		GaveUp:    db.ckpt.blocked.Load(),
		Drained:   db.ckpt.drained.Load(),
		Undrained: db.ckpt.undrained.Load(),
	}, true
}

// CheckpointStats are Checkpoints' figures.
type CheckpointStats struct {
	WALBytes, Emptied, GaveUp, Drained, Undrained int64
}
