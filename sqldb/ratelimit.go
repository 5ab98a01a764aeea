package sqldb

import (
	"context"
	"time"
)

// AddHits adds n hits to bucket's window [start, end) and returns the hits
// counted in it so far, n included. It is one atomic upsert, so every
// instance on the database counts against the same row: a limit holds
// across instances.
func (db *DB) AddHits(ctx context.Context, bucket string, start, end time.Time, n int64) (int64, error) {
	var hits int64
	err := db.writer().queryRow(ctx, `INSERT INTO rate_windows (bucket, window_start, hits, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_windows.hits + excluded.hits RETURNING hits`,
		bucket, ms64(start), n, ms64(end)).Scan(&hits)
	return hits, failed("count a rate-limited request", err)
}

// DeleteEndedRateWindows deletes the windows that ended by t.
func (db *DB) DeleteEndedRateWindows(ctx context.Context, t time.Time) (int, error) {
	res, err := db.writer().exec(ctx, `DELETE FROM rate_windows WHERE expires_at <= ?`, ms64(t))
	if err != nil {
		return 0, failed("delete ended rate windows", err)
	}
	n, err := res.RowsAffected()
	return int(n), failed("delete ended rate windows", err)
}
