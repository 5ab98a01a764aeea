package sqldb_test

import (
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// On PostgreSQL built with LZ4, the large text columns (a charge's events'
// data, in rows past the 2 KB compression threshold) are compressed with
// LZ4, not pglz.
func TestJSONColumnsCompressWithLZ4OnPostgres(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		if db.Dialect() != sqldb.Postgres {
			t.Skip("PostgreSQL only")
		}
		ctx, q := t.Context(), db.SQLDB()
		var lz4 bool
		err := q.QueryRowContext(ctx, `SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'`).Scan(&lz4)
		if err != nil {
			t.Fatal(err)
		}
		if !lz4 {
			t.Skip("this PostgreSQL has no LZ4")
		}
		for _, c := range []struct{ table, column string }{{"events", "data"}, {"idempotency_keys", "response_body"}, {"webhook_attempts", "response_body"}} {
			var method string
			err := q.QueryRowContext(ctx, `SELECT attcompression FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2`, c.table, c.column).Scan(&method)
			if err != nil || method != "l" {
				t.Errorf("%s.%s compression %q, want lz4 (l): %v", c.table, c.column, method, err)
			}
		}
		app := sqldbtest.Services(db, nil)
		co := sqldbtest.Company(t, db)
		a := parcela.Auth{CompanyID: co.ID, Environment: parcela.Sandbox}
		o := chargedOrder(t, app, a, financedOffer(t, app, a))
		var compressed, withLZ4 int
		err = q.QueryRowContext(ctx, `SELECT COUNT(pg_column_compression(data)), COUNT(*) FILTER (WHERE pg_column_compression(data) = 'lz4')
			FROM events WHERE company_id = $1`, o.CompanyID).Scan(&compressed, &withLZ4)
		if err != nil || compressed == 0 || withLZ4 != compressed {
			t.Fatalf("%d of the charge's events compressed, %d with lz4 (%v): want some, all lz4", compressed, withLZ4, err)
		}
	})
}
