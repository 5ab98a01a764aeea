package sqldb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"math/big"

	"parcela"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// tokenSecretLen base62 characters carry ~262 bits, above the 32 random
// bytes DESIGN §1 asks for.
const tokenSecretLen = 44

// HashToken is how a token is stored and looked up: hex SHA-256. A fast hash
// is right here because tokens are long random secrets, not passwords.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

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
// secret, which is never stored and cannot be shown again.
func (db *DB) CreateToken(ctx context.Context, companyID string, env parcela.Environment) (*parcela.Token, string, error) {
	if _, err := parcela.ParseEnvironment(string(env)); err != nil {
		return nil, "", err
	}
	secret, err := randomBase62(tokenSecretLen)
	if err != nil {
		return nil, "", err
	}
	plain := string(env) + "_" + secret
	t := &parcela.Token{
		CompanyID:   companyID,
		Environment: env,
		Prefix:      plain[:len(env)+1+6],
		Hash:        HashToken(plain),
	}
	err = db.inTx(ctx, func(tx *Tx) error {
		var n int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM companies WHERE id = ?`, companyID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return parcela.NotFound("company")
		}
		t.ID, t.CreatedAt = newID(), tx.Now
		_, err := tx.exec(ctx, `INSERT INTO tokens (id, company_id, environment, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			t.ID, t.CompanyID, string(t.Environment), t.Prefix, t.Hash, ms64(t.CreatedAt))
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return t, plain, nil
}

// Tokens lists a company's tokens (prefixes only).
func (db *DB) Tokens(ctx context.Context, companyID string) ([]*parcela.Token, error) {
	rows, err := db.query(ctx, `SELECT id, company_id, environment, prefix, hash, created_at, revoked_at, last_used_at
		FROM tokens WHERE company_id = ? ORDER BY created_at, id`, companyID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*parcela.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

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

// RevokeToken stops a token from working. Revoking twice is harmless.
func (db *DB) RevokeToken(ctx context.Context, id string) error {
	return db.inTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, ms64(tx.Now), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return parcela.NotFound("token")
		}
		return nil
	})
}

// Authenticate finds the live token with this secret. Any failure is the
// same unauthorized error, so callers cannot probe which part was wrong.
func (db *DB) Authenticate(ctx context.Context, plain string) (*parcela.Token, error) {
	t, err := scanToken(db.queryRow(ctx, `SELECT id, company_id, environment, prefix, hash, created_at, revoked_at, last_used_at
		FROM tokens WHERE hash = ?`, HashToken(plain)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.Errorf(parcela.EUNAUTHORIZED, "invalid access token")
	} else if err != nil {
		return nil, err
	}
	if t.RevokedAt != nil {
		return nil, parcela.Errorf(parcela.EUNAUTHORIZED, "invalid access token")
	}
	return t, nil
}

// numberBlock hands out unique numbers from blocks reserved in the counters
// table, so the hot charge transaction never waits on a counter row lock.
type numberBlock struct {
	next, end int64
}

const numberBlockSize = 1000

// NextNossoNumero returns a never-repeated boleto number. It must be called
// outside any transaction of this DB (on SQLite the writer is one connection).
func (db *DB) NextNossoNumero(ctx context.Context) (int64, error) {
	nb := &db.numbers
	db.numbersMu.Lock()
	defer db.numbersMu.Unlock()
	if nb.next >= nb.end {
		var end int64
		err := db.write.QueryRowContext(ctx, db.rebind(`UPDATE counters SET value = value + ? WHERE name = 'nosso_numero' RETURNING value`), int64(numberBlockSize)).Scan(&end)
		if err != nil {
			return 0, err
		}
		nb.next, nb.end = end-numberBlockSize+1, end+1
	}
	n := nb.next
	nb.next++
	return n, nil
}
