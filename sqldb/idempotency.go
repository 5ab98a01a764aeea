package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"parcela"
)

// IdempotencyTTL is how long a key and its stored response are kept.
const IdempotencyTTL = 24 * time.Hour

// A key's row is written once, complete, in the transaction that commits
// the request's writes (tryTx) or, for a request that wrote nothing, on its
// own (StoreIdempotentResponse). There is no claim row: a request that dies
// before its commit leaves nothing behind, so its retry runs afresh.

// storeResponse inserts resp under key in tx, first dropping the key's
// record if it is past its 24 hours (or a claim an earlier version left in
// flight). It reports false when a live record exists: another request
// with the key committed first.
func storeResponse(ctx context.Context, tx *Tx, a parcela.Auth, key string, resp parcela.IdempotentResponse, at time.Time) (bool, error) {
	now := ms64(at)
	if _, err := tx.r.exec(ctx, `DELETE FROM idempotency_keys WHERE company_id = ? AND environment = ? AND idempotency_key = ?
		AND (expires_at <= ? OR state <> 'done')`,
		a.CompanyID, string(a.Environment), key, now); err != nil {
		return false, err
	}
	res, err := tx.r.exec(ctx, `INSERT INTO idempotency_keys (company_id, environment, idempotency_key, request_hash, state, response_status, response_body, created_at, expires_at)
		VALUES (?, ?, ?, ?, 'done', ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		a.CompanyID, string(a.Environment), key, resp.RequestHash, resp.Status, string(resp.Body), now, ms64(at.Add(IdempotencyTTL)))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// loadResponse reads the live record of key (nil when there is none).
func loadResponse(ctx context.Context, r runner, a parcela.Auth, key string, at time.Time) (*parcela.IdempotentResponse, error) {
	var resp parcela.IdempotentResponse
	var body sql.NullString
	var status sql.NullInt64
	err := r.queryRow(ctx, `SELECT request_hash, response_status, response_body FROM idempotency_keys
		WHERE company_id = ? AND environment = ? AND idempotency_key = ? AND expires_at > ? AND state = 'done'`,
		a.CompanyID, string(a.Environment), key, ms64(at)).Scan(&resp.RequestHash, &status, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	resp.Status, resp.Body = int(status.Int64), []byte(body.String)
	return &resp, nil
}

// IdempotentResponse returns the response stored under key in the last 24
// hours, or nil.
func (db *DB) IdempotentResponse(ctx context.Context, a parcela.Auth, key string) (*parcela.IdempotentResponse, error) {
	resp, err := loadResponse(ctx, db.reader, a, key, db.clock.Now())
	return resp, failed("read idempotency key", err)
}

// StoreIdempotentResponse stores the response of a request that committed
// no write of its own (a refusal, or a success that changed nothing). When
// another request stored one under key first, that one is kept and
// returned.
func (db *DB) StoreIdempotentResponse(ctx context.Context, a parcela.Auth, key string, resp parcela.IdempotentResponse) (*parcela.IdempotentResponse, error) {
	var first *parcela.IdempotentResponse
	at := db.clock.Now()
	err := db.inTx(ctx, func(tx *Tx) error {
		stored, err := storeResponse(ctx, tx, a, key, resp, at)
		if err != nil || stored {
			return err
		}
		first, err = loadResponse(ctx, tx.r, a, key, at)
		return err
	})
	return first, failed("store idempotent response", err)
}

// DeleteExpiredIdempotencyKeys removes records past their 24 hours.
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context) (int, error) {
	var n int
	err := db.inTx(ctx, func(tx *Tx) error {
		res, err := tx.r.exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= ?`, ms64(db.clock.Now()))
		if err != nil {
			return err
		}
		rows, err := res.RowsAffected()
		n = int(rows)
		return err
	})
	return n, failed("delete expired idempotency keys", err)
}
