package sqldb_test

import (
	"testing"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// On PostgreSQL built with LZ4, the JSON columns past the 2 KB compression
// threshold (a charge's events) are compressed with LZ4, not pglz.
func TestJSONColumnsCompressWithLZ4OnPostgres(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		if db.Dialect() != sqldb.Postgres {
			t.Skip("PostgreSQL only")
		}
		ctx, q := t.Context(), db.SQLDB()
		if _, err := q.ExecContext(ctx, `SET default_toast_compression = 'lz4'`); err != nil {
			t.Skipf("this PostgreSQL has no LZ4: %v", err)
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
		var compressed, lz4 int
		err := q.QueryRowContext(ctx, `SELECT COUNT(pg_column_compression(data)), COUNT(*) FILTER (WHERE pg_column_compression(data) = 'lz4')
			FROM events WHERE company_id = $1`, o.CompanyID).Scan(&compressed, &lz4)
		if err != nil || compressed == 0 || lz4 != compressed {
			t.Fatalf("%d of the charge's events compressed, %d with lz4 (%v): want some, all lz4", compressed, lz4, err)
		}
	})
}
