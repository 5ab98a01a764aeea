package sqldb

import (
	"context"
	"encoding/json"
	"time"

	"parcela"
)

// Event is a state change, stored with the entity as its GET returned it at
// that moment.
type Event struct {
	ID          string
	CompanyID   string
	Environment parcela.Environment
	Entity      string
	EntityID    string
	Event       string
	Data        json.RawMessage
	CreatedAt   int64
}

// links returns the public addresses of an environment.
func (db *DB) links(env parcela.Environment) parcela.Links {
	return db.Links[env]
}

// newEvent renders an event at time at. Charges build theirs before their
// transaction, so that it only writes.
func newEvent(companyID string, env parcela.Environment, entity, entityID, event string, data any, at time.Time) (Event, error) {
	body, err := json.Marshal(data)
	if err != nil {
		return Event{}, err
	}
	return Event{ID: newID(), CompanyID: companyID, Environment: env, Entity: entity, EntityID: entityID, Event: event, Data: body, CreatedAt: ms64(at)}, nil
}

// writeEvent records an event in the transaction of the change it
// describes, and queues its webhook deliveries there too.
func writeEvent(ctx context.Context, tx *Tx, companyID string, env parcela.Environment, entity, entityID, event string, data any) error {
	e, err := newEvent(companyID, env, entity, entityID, event, data, tx.Now)
	if err != nil {
		return err
	}
	return writeEvents(ctx, tx, []Event{e})
}

// writeEvents is writeEvent for events built with newEvent, in one INSERT.
// Their ids come from one process's monotonic UUIDv7s, so events built in
// order keep that order under ORDER BY created_at, id.
func writeEvents(ctx context.Context, tx *Tx, events []Event) error {
	args := make([]any, 0, 8*len(events))
	for _, e := range events {
		args = append(args, e.ID, e.CompanyID, string(e.Environment), e.Entity, e.EntityID, e.Event, string(e.Data), e.CreatedAt)
	}
	if err := tx.insertMany(ctx, `INSERT INTO events (id, company_id, environment, entity, entity_id, event, data, created_at)`,
		`(?, ?, ?, ?, ?, ?, ?, ?)`, 8, args); err != nil {
		return err
	}
	return fanOut(ctx, tx, events)
}

// Events lists the events of one entity in order, for tests and audits.
func (db *DB) Events(ctx context.Context, a parcela.Auth, entityID string) ([]Event, error) {
	return db.events(ctx, ` AND entity_id = ?`, a.CompanyID, string(a.Environment), entityID)
}

// CompanyEvents lists every event of a company in an environment, oldest first.
func (db *DB) CompanyEvents(ctx context.Context, a parcela.Auth) ([]Event, error) {
	return db.events(ctx, ``, a.CompanyID, string(a.Environment))
}

func (db *DB) events(ctx context.Context, cond string, args ...any) ([]Event, error) {
	rows, err := db.query(ctx, `SELECT id, company_id, environment, entity, entity_id, event, data, created_at FROM events
		WHERE company_id = ? AND environment = ?`+cond+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var env, data string
		if err := rows.Scan(&e.ID, &e.CompanyID, &env, &e.Entity, &e.EntityID, &e.Event, &data, &e.CreatedAt); err != nil {
			return nil, err
		}
		e.Environment, e.Data = parcela.Environment(env), json.RawMessage(data)
		out = append(out, e)
	}
	return out, rows.Err()
}
