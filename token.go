package parcela

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// HashToken is how a token is stored and looked up: hex SHA-256. A fast hash
// is right here because tokens are long random secrets, not passwords.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Tokens authenticates API tokens.
type Tokens struct {
	store TokenStore
}

// NewTokens returns the token use case.
func NewTokens(store TokenStore) *Tokens { return &Tokens{store: store} }

var _ TokenService = (*Tokens)(nil)

// Authenticate finds the live token with this secret. Any failure is the
// same unauthorized error, so callers cannot probe which part was wrong.
func (s *Tokens) Authenticate(ctx context.Context, plain string) (*Token, error) {
	t, err := s.store.TokenByHash(ctx, HashToken(plain))
	if ErrorCode(err) == ENOTFOUND || (err == nil && t.RevokedAt != nil) {
		return nil, Errorf(EUNAUTHORIZED, "invalid access token")
	} else if err != nil {
		return nil, err
	}
	return t, nil
}
