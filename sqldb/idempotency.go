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
// own (StoreIdempotentResponse). A PATCH's or a DELETE's answer is known
// only after its commit: its write commits a claim on the key instead
// (state claimed, its token in response_body), which the answer then
// replaces. A request that dies before its commit leaves nothing behind,
// so its retry runs afresh; one that dies between its commit and its
// answer leaves a claim, which counts as in flight for claimTimeout and
// then as unanswered; an answer that failed (StoreIdempotentResponse of a
// 5xx over the claim) turns it unanswered at once (state unanswered). An
// unanswered key's retry is answered with its entity as it stands, not
// run again (parcela.IdempotentResponse.Unanswered).

// claimTimeout is how long a claim whose answer never came (a crash
// between the write's commit and the answer's) holds its key.
const claimTimeout = time.Minute

// expiredKey is the condition that drops a key's record when a request
// stores under the key or claims it: past its 24 hours. Its argument: now.
const expiredKey = `expires_at <= ?`

// answeredKey is the condition under which the answer read back for an
// unanswered key's retry drops the key's record: expired, or unanswered
// for the same request. Nothing else replaces an unanswered record: a
// second run of the same request (one whose read of the key came before
// the first's claim committed) applied its write again over changes made
// since, and another request's answer was stored over a write that
// committed. Its arguments: now, the request's hash, now less
// claimTimeout.
const answeredKey = `(expires_at <= ? OR (request_hash = ? AND (state = 'unanswered' OR (state = 'claimed' AND created_at <= ?))))`

// storeResponse inserts resp under key in tx, first dropping the key's
// record if it is spent. It reports false when a live record exists:
// another request with the key committed first (or claimed the key).
func storeResponse(ctx context.Context, tx *Tx, a parcela.Auth, key string, resp parcela.IdempotentResponse, at time.Time) (bool, error) {
	return insertKey(ctx, tx, a, key, resp.RequestHash, "done", &resp.Status, string(resp.Body), resp.ReadBack, at)
}

// claimKey inserts a claim on key in tx, to commit with the write of an
// AfterCommit request, token naming it. It reports false when a live
// record exists.
func claimKey(ctx context.Context, tx *Tx, a parcela.Auth, key, hash, token string, at time.Time) (bool, error) {
	return insertKey(ctx, tx, a, key, hash, "claimed", nil, token, false, at)
}

// insertKey inserts key's record, first dropping the one there if it is
// expired or, for an answer read back (readBack), unanswered for the same
// request.
func insertKey(ctx context.Context, tx *Tx, a parcela.Auth, key, hash, state string, status *int, body string, readBack bool, at time.Time) (bool, error) {
	now := ms64(at)
	drop, args := expiredKey, []any{a.CompanyID, string(a.Environment), key, now}
	if readBack {
		drop, args = answeredKey, append(args, hash, ms64(at.Add(-claimTimeout)))
	}
	if _, err := tx.r.exec(ctx, `DELETE FROM idempotency_keys WHERE company_id = ? AND environment = ? AND idempotency_key = ? AND `+drop, args...); err != nil {
		return false, err
	}
	res, err := tx.r.exec(ctx, `INSERT INTO idempotency_keys (company_id, environment, idempotency_key, request_hash, state, response_status, response_body, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		a.CompanyID, string(a.Environment), key, hash, state, status, body, now, ms64(at.Add(IdempotencyTTL)))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// loadResponse reads the live record of key: nil when there is none,
// parcela.ErrIdempotencyKeyTaken when it is a claim whose answer is still
// to come, and one marked Unanswered when its write committed without an
// answer stored.
func loadResponse(ctx context.Context, r runner, a parcela.Auth, key string, at time.Time) (*parcela.IdempotentResponse, error) {
	var resp parcela.IdempotentResponse
	var state string
	var body sql.NullString
	var status sql.NullInt64
	var created int64
	err := r.queryRow(ctx, `SELECT request_hash, state, response_status, response_body, created_at FROM idempotency_keys
		WHERE company_id = ? AND environment = ? AND idempotency_key = ? AND expires_at > ?`,
		a.CompanyID, string(a.Environment), key, ms64(at)).Scan(&resp.RequestHash, &state, &status, &body, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	case state == "claimed" && created > ms64(at.Add(-claimTimeout)):
		return nil, parcela.ErrIdempotencyKeyTaken
	case state != "done":
		// A claim whose answer never came, or one that failed: the
		// write committed.
		return &parcela.IdempotentResponse{RequestHash: resp.RequestHash, Unanswered: true}, nil
	}
	resp.Status, resp.Body = int(status.Int64), []byte(body.String)
	return &resp, nil
}

// IdempotentResponse returns the response stored under key in the last 24
// hours, or nil; a key claimed by a request whose answer is still to come
// is parcela.ErrIdempotencyKeyTaken.
func (db *DB) IdempotentResponse(ctx context.Context, a parcela.Auth, key string) (*parcela.IdempotentResponse, error) {
	resp, err := loadResponse(ctx, db.reader, a, key, db.clock.Now())
	return resp, failed("read idempotency key", err)
}

// StoreIdempotentResponse stores the response of a request that committed
// no write of its own (a refusal, or a success that changed nothing), or
// that of an AfterCommit request over the claim its write committed. When
// another request stored one under key first, that one is kept and
// returned; when another claimed the key and has not stored its answer
// yet, nothing is stored and the error is parcela.ErrIdempotencyKeyTaken.
// An AfterCommit request's 5xx is not stored: its claim turns unanswered.
func (db *DB) StoreIdempotentResponse(ctx context.Context, a parcela.Auth, key string, resp parcela.IdempotentResponse) (*parcela.IdempotentResponse, error) {
	var first *parcela.IdempotentResponse
	at := db.clock.Now()
	req := parcela.IdempotentRequestOf(ctx)
	// This write is the answer's own: it claims nothing (storeAnswer).
	ctx = parcela.WithIdempotentRequest(ctx, nil)
	err := db.inTx(ctx, func(tx *Tx) error {
		first = nil
		if req != nil && req.Claim() != "" && resp.Status >= 500 {
			// The write committed but its answer failed (its entity could
			// not be read back): a retry reads it back at once, rather
			// than wait for the claim to be spent, or run the write again.
			_, err := tx.r.exec(ctx, `UPDATE idempotency_keys SET state = 'unanswered', response_body = ''
				WHERE company_id = ? AND environment = ? AND idempotency_key = ? AND state = 'claimed' AND response_body = ?`,
				a.CompanyID, string(a.Environment), key, req.Claim())
			return err
		}
		if req != nil && req.Claim() != "" {
			res, err := tx.r.exec(ctx, `UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ?
				WHERE company_id = ? AND environment = ? AND idempotency_key = ? AND state = 'claimed' AND response_body = ?`,
				resp.Status, string(resp.Body), a.CompanyID, string(a.Environment), key, req.Claim())
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 1 {
				return err
			}
			// The claim was spent and dropped meanwhile: stored as any.
		}
		stored, err := storeResponse(ctx, tx, a, key, resp, at)
		if err != nil || stored {
			return err
		}
		first, err = loadResponse(ctx, tx.r, a, key, at)
		return err
	})
	return first, failed("store idempotent response", err)
}

// cleanupBatch is how many expired keys one transaction of the cleanup
// deletes.
const cleanupBatch = 1000

// DeleteExpiredIdempotencyKeys removes records past their 24 hours, a
// batch of cleanupBatch at a time, each in its own transaction: deleted at
// once, a busy company's day of keys (each with its stored response) held
// SQLite's single writer for seconds, and every company's writes waited
// for it.
func (db *DB) DeleteExpiredIdempotencyKeys(ctx context.Context) (int, error) {
	now := ms64(db.clock.Now())
	total := 0
	for {
		var n int
		err := db.inTx(ctx, func(tx *Tx) error {
			res, err := tx.r.exec(ctx, `DELETE FROM idempotency_keys WHERE (company_id, environment, idempotency_key) IN
				(SELECT company_id, environment, idempotency_key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)`, now, cleanupBatch)
			if err != nil {
				return err
			}
			rows, err := res.RowsAffected()
			n = int(rows)
			return err
		})
		if err != nil {
			return total, failed("delete expired idempotency keys", err)
		}
		if total += n; n < cleanupBatch {
			return total, nil
		}
	}
}
