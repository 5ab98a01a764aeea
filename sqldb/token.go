package sqldb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"math/big"
	"time"

	"parcela"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// tokenSecretLen base62 characters carry ~262 bits, above the 32 random
// bytes a token must hold.
const tokenSecretLen = 44

func randomBase62(n int) (string, error) {
	b := make([]byte, n)
	max := big.NewInt(int64(len(base62)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		b[i] = base62[v.Int64()]
	}
	return string(b), nil
}

// CreateToken makes a token for a company in one environment and returns the
// secret, which is never stored and cannot be shown again. Tokens are the
// operator's (the CLI's): no use case stands before this.
func (db *DB) CreateToken(ctx context.Context, companyID string, env parcela.Environment) (*parcela.Token, string, error) {
	t, plain, err := newToken(companyID, env, db.clock.Now())
	if err != nil {
		return nil, "", err
	}
	err = db.inTx(ctx, func(tx *Tx) error {
		var n int
		if err := tx.r.queryRow(ctx, `SELECT COUNT(*) FROM companies WHERE id = ?`, companyID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return parcela.NotFound("company")
		}
		return insertToken(ctx, tx, t)
	})
	if err != nil {
		return nil, "", failed("create token", err)
	}
	return t, plain, nil
}

// newToken draws a token of companyID for env, created at, and returns it
// with its secret.
func newToken(companyID string, env parcela.Environment, at time.Time) (*parcela.Token, string, error) {
	if _, err := parcela.ParseEnvironment(string(env)); err != nil {
		return nil, "", err
	}
	secret, err := randomBase62(tokenSecretLen)
	if err != nil {
		return nil, "", err
	}
	plain := string(env) + "_" + secret
	return &parcela.Token{
		ID:          parcela.NewID(),
		CompanyID:   companyID,
		Environment: env,
		Prefix:      plain[:len(env)+1+6],
		Hash:        parcela.HashToken(plain),
		CreatedAt:   at,
	}, plain, nil
}

// insertToken stores t in tx.
func insertToken(ctx context.Context, tx *Tx, t *parcela.Token) error {
	_, err := tx.r.exec(ctx, `INSERT INTO tokens (id, company_id, environment, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.ID, t.CompanyID, string(t.Environment), t.Prefix, t.Hash, ms64(t.CreatedAt))
	return err
}

const tokenSelect = `SELECT id, company_id, environment, prefix, hash, created_at, revoked_at, last_used_at FROM tokens`

func scanToken(row rowScanner) (*parcela.Token, error) {
	var t parcela.Token
	var env string
	var created int64
	var revoked, used sql.NullInt64
	if err := row.Scan(&t.ID, &t.CompanyID, &env, &t.Prefix, &t.Hash, &created, &revoked, &used); err != nil {
		return nil, err
	}
	t.Environment = parcela.Environment(env)
	t.CreatedAt = fromMS(created)
	t.RevokedAt, t.LastUsedAt = fromNullMS(revoked), fromNullMS(used)
	return &t, nil
}

// Tokens lists a company's tokens (prefixes only).
func (db *DB) Tokens(ctx context.Context, companyID string) ([]*parcela.Token, error) {
	out, err := collect(ctx, db.reader, scanToken, tokenSelect+` WHERE company_id = ? ORDER BY created_at, id`, companyID)
	return out, failed("list tokens", err)
}

// RevokeToken stops a token from working. Revoking twice is harmless.
func (db *DB) RevokeToken(ctx context.Context, id string) error {
	return failed("revoke token", db.inTx(ctx, func(tx *Tx) error {
		res, err := tx.r.exec(ctx, `UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, ms64(db.clock.Now()), id)
		return oneRow(res, err, "token")
	}))
}

// TokenByHash finds a token, live or revoked, by the hash of its secret.
func (db *DB) TokenByHash(ctx context.Context, hash string) (*parcela.Token, error) {
	t, err := scanToken(db.reader.queryRow(ctx, tokenSelect+` WHERE hash = ?`, hash))
	return t, failed("read token", notFound(err, "token"))
}
