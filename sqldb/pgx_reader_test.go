package sqldb

import (
	"database/sql"
	"errors"
	"os"
	"testing"
)

// PostgreSQL's reader queries pgx's pool directly; its transactions, and
// every SQLite statement, go through database/sql.
func TestPostgresReadsGoToPgx(t *testing.T) {
	t.Parallel()
	url := os.Getenv("PARCELA_TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("PARCELA_TEST_POSTGRES_URL is not set")
	}
	db, err := Open(t.Context(), url, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if db.reader.pool == nil || db.reader.pool != db.pool || db.reader.heavy().pool != db.pool {
		t.Fatal("PostgreSQL's reads go through database/sql")
	}
	if db.writer().pool != nil {
		t.Fatal("the writer's statements bypass database/sql")
	}
	// Its pages pass a gate a quarter of the pool wide, a slot each, held
	// until the rows are closed; its transactions pass none.
	g := db.reader.gate
	if g == nil || !g.pagesOnly || g.n != int64(db.pool.Config().MaxConns/4) {
		t.Fatalf("PostgreSQL's page gate: %+v for a pool of %d", g, db.pool.Config().MaxConns)
	}
	page, err := db.reader.heavy().query(t.Context(), `SELECT n FROM (VALUES (1), (2)) AS v (n) WHERE n > ?`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if g.sem.TryAcquire(g.n) {
		t.Fatal("a page of rows took no slot of the page gate")
	}
	if err := page.Close(); err != nil {
		t.Fatal(err)
	}
	if !g.sem.TryAcquire(g.n) {
		t.Fatal("a closed page kept its slot")
	}
	g.sem.Release(g.n)
	tx, err := db.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	gated := tx.r.gate != nil
	tx.Rollback()
	if gated {
		t.Fatal("a transaction's statements pass the page gate")
	}
	rows, err := db.reader.query(t.Context(), `SELECT n FROM (VALUES (1), (2)) AS v (n) WHERE n > ?`, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	if err := rows.Close(); err != nil || sum != 3 {
		t.Fatalf("read %d (%v), want 3", sum, err)
	}
	var none int
	if err := db.reader.queryRow(t.Context(), `SELECT 1 WHERE 1 = ?`, 2).Scan(&none); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("no row: %v, want sql.ErrNoRows", err)
	}
	// A failure met after the first row shows in Err and in Close.
	rows, err = db.reader.query(t.Context(), `SELECT 10 / (n - ?) FROM (VALUES (1), (2)) AS v (n) ORDER BY n`, 2)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if rows.Err() == nil || rows.Close() == nil {
		t.Fatal("a division by zero in the second row was not reported")
	}
	// Every connection went back to the pool: closed rows and scanned rows
	// hold none.
	if n := db.pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d connections still held", n)
	}
}
