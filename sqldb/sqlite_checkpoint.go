package sqldb

import (
	"context"
	"database/sql"
	"time"
)

// walCheckpointer copies SQLite's write-ahead log into the database file
// from its own connection, in the background. Left to SQLite, the commit
// that crosses 1,000 WAL pages runs the checkpoint, with its fsyncs, while
// holding the single writer: every write waits behind it. A PASSIVE
// checkpoint here waits for nobody and nobody waits for it.
type walCheckpointer struct {
	conn   *sql.DB
	cancel context.CancelFunc
	done   chan struct{}
}

func startCheckpointer(dsn string, every time.Duration) (*walCheckpointer, error) {
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	c := &walCheckpointer{conn: conn, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// An error (the file busy, say) is retried at the next tick.
			conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}()
	return c, nil
}

// stop ends the loop; a last checkpoint leaves the log short for the next start.
func (c *walCheckpointer) stop() error {
	c.cancel()
	<-c.done
	c.conn.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
	return c.conn.Close()
}
