package sqldb

import (
	"context"
	"errors"
	"testing"

	"parcela"
)

// A pipeline reports its first failure, whatever ran after it, and its
// statements see each other's writes in order, on both engines.
func TestPipelineReportsTheFirstFailure(t *testing.T) {
	t.Parallel()
	withScratchTable(t, `id TEXT PRIMARY KEY, n BIGINT NOT NULL`, func(t *testing.T, ctx context.Context, db *DB, _ runner, table string) {
		// In order: an insert, a guarded update of it, a read of both.
		var got int64
		err := db.inTx(ctx, func(tx *Tx) error {
			p := tx.pipeline()
			if err := p.insertMany(ctx, `INSERT INTO `+table+` (id, n)`, `(?, ?)`, 2, []any{"a", 1, "b", 2}); err != nil {
				return err
			}
			if err := p.guarded(ctx, "row", "a", `UPDATE `+table+` SET n = n + 10 WHERE id = ? AND n = ?`, "a", 1); err != nil {
				return err
			}
			if err := p.queryRow(ctx, func(row rowScanner) error { return row.Scan(&got) }, `SELECT SUM(n) FROM `+table); err != nil {
				return err
			}
			return p.flush(ctx)
		})
		if err != nil || got != 13 {
			t.Fatalf("sum %d, %v; want 13", got, err)
		}

		// A guard matching no row is the failure reported, though a
		// duplicate key follows it; nothing of the transaction stays.
		var conflict *parcela.Conflict
		err = db.inTx(ctx, func(tx *Tx) error {
			p := tx.pipeline()
			if err := p.exec(ctx, nil, `INSERT INTO `+table+` (id, n) VALUES (?, ?)`, "c", 3); err != nil {
				return err
			}
			if err := p.guarded(ctx, "row", "a", `UPDATE `+table+` SET n = 0 WHERE id = ? AND n = ?`, "a", 1); err != nil {
				return err
			}
			if err := p.exec(ctx, nil, `INSERT INTO `+table+` (id, n) VALUES (?, ?)`, "b", 4); err != nil {
				return err
			}
			return p.flush(ctx)
		})
		if !errors.As(err, &conflict) || conflict.ID != "a" {
			t.Fatalf("got %v, want the guard's conflict", err)
		}
		var rows int
		if err := db.reader.queryRow(ctx, `SELECT COUNT(*) FROM `+table).Scan(&rows); err != nil || rows != 2 {
			t.Fatalf("%d rows, %v; want the first transaction's 2", rows, err)
		}
	})
}
