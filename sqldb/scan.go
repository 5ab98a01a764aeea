package sqldb

import (
	"database/sql"
	"strings"
	"time"

	"github.com/google/uuid"

	"parcela"
)

// Timestamps are stored as milliseconds since the Unix epoch.
func ms64(t time.Time) int64 { return t.UnixMilli() }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).In(parcela.SaoPaulo) }

func msPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func fromNullMS(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMS(n.Int64)
	return &t
}

func nullString(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	s := n.String
	return &s
}

func nullInt(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	v := int(n.Int64)
	return &v
}

// placeholders returns "?, ?, …" for an IN list of n values (n > 0).
func placeholders(n int) string {
	return strings.Repeat("?, ", n-1) + "?"
}

// newID returns a time-ordered UUID (v7), which keeps primary-key indexes
// append-mostly.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// rateValue reads a rate stored as text; stored values were validated on
// the way in, so a bad one is corruption and surfaces as an error.
type rateScanner struct{ r *parcela.Rate }

func (s rateScanner) Scan(src any) error {
	var str string
	switch v := src.(type) {
	case string:
		str = v
	case []byte:
		str = string(v)
	default:
		return sql.ErrNoRows
	}
	r, err := parcela.ParseRate(str)
	if err != nil {
		return err
	}
	*s.r = r
	return nil
}

func rate(r *parcela.Rate) rateScanner { return rateScanner{r} }
