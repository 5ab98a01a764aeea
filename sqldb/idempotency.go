package sqldb

import (
	"context"
	"database/sql"
	"time"

	"parcela"
)

// IdempotencyTTL is how long a key and its stored response are kept.
const IdempotencyTTL = 24 * time.Hour

// idempotencyAbandonAfter: a claim still in flight after this long belongs to
// a request that died with its process; a retry may take the key over.
const idempotencyAbandonAfter = 2 * time.Minute

// IdempotentResponse is a stored response to replay.
type IdempotentResponse struct {
	Status int
	Body   []byte
}

// ClaimIdempotencyKey reserves key for a request whose method, path and body
// hash to requestHash. It returns (nil, nil) when the caller now owns the key
// and must call CompleteIdempotencyKey or ReleaseIdempotencyKey; a stored
// response when the same request already completed; 422 when the key was used
// with another request; 409 while the first request is still running.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, a parcela.Auth, key, requestHash string) (*IdempotentResponse, error) {
	var replay *IdempotentResponse
	err := db.inTx(ctx, func(tx *Tx) error {
		now := ms64(tx.Now)
		res, err := tx.exec(ctx, `INSERT INTO idempotency_keys (company_id, environment, idempotency_key, request_hash, state, created_at, expires_at)
			VALUES (?, ?, ?, ?, 'in_flight', ?, ?) ON CONFLICT DO NOTHING`,
			a.CompanyID, string(a.Environment), key, requestHash, now, ms64(tx.Now.Add(IdempotencyTTL)))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var hash, state string
		var status sql.NullInt64
		var body sql.NullString
		var created, expires int64
		err = tx.queryRow(ctx, `SELECT request_hash, state, response_status, response_body, created_at, expires_at FROM idempotency_keys
			WHERE company_id = ? AND environment = ? AND idempotency_key = ?`, a.CompanyID, string(a.Environment), key).
			Scan(&hash, &state, &status, &body, &created, &expires)
		if err != nil {
			return err
		}
		abandoned := state == "in_flight" && now-created > idempotencyAbandonAfter.Milliseconds()
		if expires <= now || abandoned {
			_, err := tx.exec(ctx, `UPDATE idempotency_keys SET request_hash = ?, state = 'in_flight', response_status = NULL, response_body = NULL,
				created_at = ?, expires_at = ? WHERE company_id = ? AND environment = ? AND idempotency_key = ?`,
				requestHash, now, ms64(tx.Now.Add(IdempotencyTTL)), a.CompanyID, string(a.Environment), key)
			return err
		}
		if hash != requestHash {
			return parcela.Errorf(parcela.EIDEMPOTENTREUSED, "Idempotency-Key %q was already used with a different request", key)
		}
		if state == "in_flight" {
			return parcela.Errorf(parcela.EIDEMPOTENTFLIGHT, "a request with Idempotency-Key %q is still being processed; retry shortly", key)
		}
		replay = &IdempotentResponse{Status: int(status.Int64), Body: []byte(body.String)}
		return nil
	})
	return replay, err
}

// CompleteIdempotencyKey stores the response of the request that owns key.
func (db *DB) CompleteIdempotencyKey(ctx context.Context, a parcela.Auth, key string, status int, body []byte) error {
	return db.inTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, `UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ?
			WHERE company_id = ? AND environment = ? AND idempotency_key = ?`, status, string(body), a.CompanyID, string(a.Environment), key)
		return err
	})
}

// ReleaseIdempotencyKey forgets a claim whose request failed without a
// result worth replaying (a server error), so the client can retry.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, a parcela.Auth, key string) error {
	return db.inTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, `DELETE FROM idempotency_keys WHERE company_id = ? AND environment = ? AND idempotency_key = ? AND state = 'in_flight'`,
			a.CompanyID, string(a.Environment), key)
		return err
	})
}

// DeleteExpiredIdempotencyKeys removes records past their 24 hours.
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context) (int, error) {
	var n int
	err := db.inTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= ?`, ms64(tx.Now))
		if err != nil {
			return err
		}
		rows, err := res.RowsAffected()
		n = int(rows)
		return err
	})
	return n, err
}
