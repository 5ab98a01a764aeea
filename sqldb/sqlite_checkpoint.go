package sqldb

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// walLimit bounds SQLite's write-ahead log. Past it the checkpointer stops
// being polite: a TRUNCATE checkpoint waits for the readers that pin old
// frames (and briefly for the writer), copies everything back and empties
// the log. The writer's journal_size_limit is the same figure, so a log
// reset by a commit shrinks to it too.
const walLimit = 64 << 20

// walWatch is how often the log's size is looked at. Charges write about
// 40 MB of log a second on this project's benchmark machine; a truncating
// checkpoint, once pending, holds new writers back, so the log's peak is
// walLimit/4 plus what a walWatch of writes adds.
const walWatch = 25 * time.Millisecond

// walCheckpointer copies SQLite's write-ahead log into the database file
// from its own connection, in the background. Left to SQLite, the commit
// that crosses 1,000 WAL pages runs the checkpoint, with its fsyncs, while
// holding the single writer: every write waits behind it. A PASSIVE
// checkpoint here waits for nobody and nobody waits for it; but under
// sustained writes and reads it never reaches the end of the log, so the
// log would grow without bound. When the log passes a quarter of walLimit
// the next checkpoint is a TRUNCATE, which does wait, and keeps the log
// under walLimit.
type walCheckpointer struct {
	conn    *sql.DB
	writer  *sql.DB // the single writer connection, for truncating
	walPath string
	cancel  context.CancelFunc
	done    chan struct{}
	limit   atomic.Int64 // walLimit; smaller in tests
	size    atomic.Int64 // the log's size at the last tick, for the metric
	resets  atomic.Int64 // TRUNCATE checkpoints run
}

func startCheckpointer(dsn string, writer *sql.DB, every time.Duration) (*walCheckpointer, error) {
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	c := &walCheckpointer{conn: conn, writer: writer, walPath: walPathOf(dsn), cancel: cancel, done: make(chan struct{})}
	c.limit.Store(walLimit)
	go func() {
		defer close(c.done)
		// The log is measured often (a stat is cheap) so that a burst of
		// writes meets a truncating checkpoint within walWatch; the passive
		// one runs every `every`.
		t := time.NewTicker(walWatch)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if c.measure() > c.limit.Load()/4 {
				// On the writer's own connection: it queues behind the
				// transaction under way like any write, instead of polling
				// for SQLite's write lock, which a busy writer takes back
				// within microseconds of each commit.
				_, _ = c.writer.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
				c.measure()
				c.resets.Add(1)
				last = time.Now()
			} else if time.Since(last) >= every {
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

// measure reads the log's size.
func (c *walCheckpointer) measure() int64 {
	var n int64
	if st, err := os.Stat(c.walPath); err == nil {
		n = st.Size()
	}
	c.size.Store(n)
	return n
}

// stop ends the loop; a last checkpoint leaves the log short for the next start.
func (c *walCheckpointer) stop() error {
	c.cancel()
	<-c.done
	_, _ = c.conn.ExecContext(context.Background(), `PRAGMA wal_checkpoint(TRUNCATE)`)
	return c.conn.Close()
}

// walPathOf finds the log's file from a "file:PATH?…" data source name.
func walPathOf(dsn string) string {
	p, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	return p + "-wal"
}

// WALBytes is the size of SQLite's write-ahead log as last measured (0 on
// PostgreSQL), for the parcela_sqlite_wal_bytes metric.
func (db *DB) WALBytes() int64 {
	if db.ckpt == nil {
		return 0
	}
	return db.ckpt.size.Load()
}
