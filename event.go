package parcela

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Event is a state change, stored with the entity as its GET showed it at
// that moment; webhooks deliver it.
type Event struct {
	ID          string
	CompanyID   string
	Environment Environment
	Entity      string // order, billing or bill
	EntityID    string
	Event       string
	Data        json.RawMessage
	CreatedAt   time.Time
}

// NewID returns a new entity id: a time-ordered UUID (v7), which keeps
// primary-key indexes append-mostly. One process's ids are monotonic, so
// events built in order keep that order under ORDER BY created_at, id.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// NewRequestID returns the id of one HTTP request (the API's or a page's),
// which its answer carries in X-Request-Id and its log lines name.
func NewRequestID() string {
	var b [12]byte
	rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}
