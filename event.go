package parcela

import (
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

// NewEvent renders an event of one entity at time at.
func NewEvent(companyID string, env Environment, entity, entityID, event string, data any, at time.Time) (Event, error) {
	body, err := json.Marshal(data)
	if err != nil {
		return Event{}, err
	}
	return Event{ID: NewID(), CompanyID: companyID, Environment: env, Entity: entity, EntityID: entityID, Event: event, Data: body, CreatedAt: at}, nil
}

// NewID returns a new entity id: a time-ordered UUID (v7), which keeps
// primary-key indexes append-mostly. One process's ids are monotonic, so
// events built in order keep that order under ORDER BY created_at, id.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }
