package sqldb

import (
	"database/sql"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

func TestUnpackRewritesPackedLists(t *testing.T) {
	t.Parallel()
	q := `SELECT ` + pack(`a, coalesce(b, 'x)'), NULL`) + ` FROM t UNION ALL SELECT ` + pack(`c, (d)`) + ` FROM u WHERE e = ?`
	for _, c := range []struct {
		sqlite bool
		want   string
	}{
		{true, `SELECT json_array(a, coalesce(b, 'x)'), NULL) FROM t UNION ALL SELECT json_array(c, (d)) FROM u WHERE e = ?`},
		{false, `SELECT a, coalesce(b, 'x)'), NULL FROM t UNION ALL SELECT c, (d) FROM u WHERE e = ?`},
	} {
		got, packed := unpack(q, c.sqlite)
		if got != c.want || !packed {
			t.Errorf("sqlite %v: %q, %v; want %q, true", c.sqlite, got, packed, c.want)
		}
	}
	if got, packed := unpack(`SELECT a FROM t`, true); got != `SELECT a FROM t` || packed {
		t.Errorf("no pack: %q, %v", got, packed)
	}
	b := &binder{dialect: Postgres}
	if got, packed := b.bindPacked(`SELECT ` + pack(`a, b`) + ` FROM t WHERE c = ? AND d = ?`); got != `SELECT a, b FROM t WHERE c = $1 AND d = $2` || packed {
		t.Errorf("postgres: %q, %v", got, packed)
	}
	b = &binder{dialect: SQLite}
	for range 2 { // the second from the cache
		if got, packed := b.bindPacked(`SELECT ` + pack(`a, b`) + ` FROM t WHERE c = ?`); got != `SELECT json_array(a, b) FROM t WHERE c = ?` || !packed {
			t.Errorf("sqlite: %q, %v", got, packed)
		}
	}
}

// packedDB has a table of one text, one integer and one boolean column, as
// the schema declares them.
func packedDB(t testing.TB) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (s TEXT, n BIGINT, b BOOLEAN, r TEXT NOT NULL DEFAULT '0.0299')`); err != nil {
		t.Fatal(err)
	}
	return db
}

// checkPacked stores s, n and b and reads the row back as columns and
// packed: the two must give the same values.
func checkPacked(t testing.TB, db *sql.DB, s any, n any, b any) {
	t.Helper()
	if _, err := db.Exec(`DELETE FROM t`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO t (s, n, b) VALUES (?, ?, ?)`, s, n, b); err != nil {
		t.Fatal(err)
	}
	plain := make(rawRow, 4)
	if err := db.QueryRow(`SELECT s, n, b, r FROM t`).Scan(plain.dests()...); err != nil {
		t.Fatal(err)
	}
	q, _ := unpack(`SELECT `+pack(`s, n, b, r`)+` FROM t`, true)
	var js string
	if err := db.QueryRow(q).Scan(&js); err != nil {
		t.Fatal(err)
	}
	packed := make(rawRow, 4)
	if err := decodePacked(js, packed); err != nil {
		t.Fatalf("%q: %v", js, err)
	}
	if !reflect.DeepEqual(packed, plain) {
		t.Fatalf("packed %#v (from %q), as columns %#v", packed, js, plain)
	}
}

func TestPackedRowsReadAsColumns(t *testing.T) {
	t.Parallel()
	db := packedDB(t)
	var controls strings.Builder
	for c := range 0x20 {
		controls.WriteByte(byte(c))
	}
	for _, s := range []any{nil, "", "null", "[1,2]", `{"a": "b"}`, "12345", "-1", `"`, `\`, `\"`, `a\u0041`, "\x7f",
		controls.String(), "São Paulo — ação", "😀 𝄞", "\xff\xfe invalid", "a\x00b", "line\nbreak\ttab", strings.Repeat("x", 5000)} {
		checkPacked(t, db, s, int64(0), false)
	}
	for _, n := range []any{nil, int64(math.MaxInt64), int64(math.MinInt64), int64(-1), int64(1 << 53), int64(1<<53 + 1)} {
		checkPacked(t, db, "x", n, true)
	}
}

func FuzzPackedRow(f *testing.F) {
	f.Add("São \"Paulo\"\n\\", int64(math.MaxInt64))
	f.Add("\x00\x1f\xff", int64(math.MinInt64))
	db := packedDB(f)
	f.Fuzz(func(t *testing.T, s string, n int64) {
		checkPacked(t, db, s, n, n%2 == 0)
	})
}

func TestDecodePackedRefusesWhatItCannotReadExactly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		json string
		n    int
	}{
		{`[1.5]`, 1},                  // a real number
		{`[1e3]`, 1},                  // another
		{`[1,2]`, 1},                  // too many columns
		{`[1]`, 2},                    // too few
		{`[1,]`, 2},                   // a trailing comma
		{`["a]`, 1},                   // unterminated
		{`["\x"]`, 1},                 // an unknown escape
		{`["\u12"]`, 1},               // a short \u
		{`[true]`, 1},                 // json_array writes no booleans
		{`{"a":1}`, 1},                // not an array
		{`[99999999999999999999]`, 1}, // beyond int64
	} {
		if err := decodePacked(c.json, make([]any, c.n)); err == nil {
			t.Errorf("%s into %d columns: no error", c.json, c.n)
		}
	}
	row := make([]any, 4)
	if err := decodePacked(`["a\"b",null,-7,"\ud83d\ude00\u00e9"]`, row); err != nil {
		t.Fatal(err)
	}
	if want := []any{`a"b`, nil, int64(-7), "😀é"}; !reflect.DeepEqual(row, want) {
		t.Errorf("%#v, want %#v", row, want)
	}
}

// TestAssignAsDatabaseSQL checks assign's direct paths against the
// conversion database/sql makes (sql.Null[T], or the Scanner's own).
func TestAssignAsDatabaseSQL(t *testing.T) {
	t.Parallel()
	slow := func(dest, src any) error {
		switch d := dest.(type) {
		case sql.Scanner:
			return d.Scan(src)
		case *string:
			return assignNotNull(d, src)
		case *int64:
			return assignNotNull(d, src)
		case *int:
			return assignNotNull(d, src)
		case *bool:
			return assignNotNull(d, src)
		}
		return nil
	}
	dests := []func() any{
		func() any { return new(int64) }, func() any { return new(int) }, func() any { return new(string) },
		func() any { return new(bool) }, func() any { return new(sql.NullInt64) }, func() any { return new(sql.NullString) },
	}
	for _, src := range []any{int64(5), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), int64(1), int64(0),
		int32(7), int32(math.MinInt32), "s", "", "12", true, false, nil} {
		for _, newDest := range dests {
			fast, ref := newDest(), newDest()
			errFast, errRef := assign(fast, src), slow(ref, src)
			if (errFast == nil) != (errRef == nil) || !reflect.DeepEqual(fast, ref) {
				t.Errorf("%#v into %T: %#v, %v; database/sql: %#v, %v", src, fast, fast, errFast, ref, errRef)
			}
		}
	}
}
