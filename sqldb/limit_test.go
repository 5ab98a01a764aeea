package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"modernc.org/sqlite"
)

// recordingDriver is SQLite's driver, noting the text of every statement
// its connections prepare.
type recordingDriver struct {
	mu       sync.Mutex
	prepared []string
}

func (d *recordingDriver) Open(name string) (driver.Conn, error) {
	c, err := (&sqlite.Driver{}).Open(name)
	if err != nil {
		return nil, err
	}
	return recordingConn{sqliteConn: c.(sqliteConn), d: d}, nil
}

type recordingConn struct {
	sqliteConn
	d *recordingDriver
}

func (c recordingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.d.mu.Lock()
	c.d.prepared = append(c.d.prepared, query)
	c.d.mu.Unlock()
	return c.sqliteConn.PrepareContext(ctx, query)
}

func (d *recordingDriver) saw(q string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.prepared {
		if p == q {
			return true
		}
	}
	return false
}

type recordingConnector struct {
	dsn string
	d   driver.Driver
}

func (c recordingConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c recordingConnector) Driver() driver.Driver                        { return c.d }

// Both of SQLite's statement caches, the readers' and the writer's,
// prepare a statement with its LIMIT and OFFSET cast (castLimits): a page
// of the store's, or a statement of River's, is compiled once, not at
// every call. The statement pages as written.
func TestStatementCachesCastLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := "file:" + filepath.Join(t.TempDir(), "limits.db")
	const page = `SELECT n FROM t ORDER BY n LIMIT ? OFFSET ?`
	want := castLimits(page)
	if !strings.Contains(want, "CAST(") {
		t.Fatalf("castLimits(%q) = %q", page, want)
	}

	writes := &recordingDriver{}
	writer := sql.OpenDB(cachingConnector{dsn: dsn, d: cachingDriver{writes}})
	writer.SetMaxOpenConns(1)
	defer writer.Close()
	if _, err := writer.ExecContext(ctx, `CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3), (4), (5)`); err != nil {
		t.Fatal(err)
	}
	reads := &recordingDriver{}
	pool := sql.OpenDB(recordingConnector{dsn: dsn, d: reads})
	defer pool.Close()
	cache := &stmtCache{pool: pool}
	defer cache.close()

	for name, got := range map[string][]int{
		"writer": numbers(t)(writer.QueryContext(ctx, page, 2, 1)),
		"reader": numbers(t)(cache.QueryContext(ctx, page, 2, 1)),
	} {
		if len(got) != 2 || got[0] != 2 || got[1] != 3 {
			t.Fatalf("%s: LIMIT 2 OFFSET 1 gave %v", name, got)
		}
	}
	if !writes.saw(want) || writes.saw(page) {
		t.Errorf("the writer prepared %q", writes.prepared)
	}
	if !reads.saw(want) || reads.saw(page) {
		t.Errorf("the readers prepared %q", reads.prepared)
	}
}
