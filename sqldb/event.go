package sqldb

import (
	"context"
	"encoding/json"

	"parcela"
)

// writeEvents records events in the transaction of the change they
// describe, in one INSERT, and queues their webhook deliveries there too.
func writeEvents(ctx context.Context, tx *Tx, events []parcela.Event) error {
	if len(events) == 0 {
		return nil
	}
	args := make([]any, 0, 8*len(events))
	for _, e := range events {
		args = append(args, e.ID, e.CompanyID, string(e.Environment), e.Entity, e.EntityID, e.Event, string(e.Data), ms64(e.CreatedAt))
	}
	if err := tx.insertMany(ctx, `INSERT INTO events (id, company_id, environment, entity, entity_id, event, data, created_at)`,
		`(?, ?, ?, ?, ?, ?, ?, ?)`, 8, args); err != nil {
		return err
	}
	return fanOut(ctx, tx, events)
}

func scanEvent(row rowScanner) (parcela.Event, error) {
	var e parcela.Event
	var env, data string
	var created int64
	err := row.Scan(&e.ID, &e.CompanyID, &env, &e.Entity, &e.EntityID, &e.Event, &data, &created)
	e.Environment, e.Data, e.CreatedAt = parcela.Environment(env), json.RawMessage(data), fromMS(created)
	return e, err
}

const eventSelect = `SELECT id, company_id, environment, entity, entity_id, event, data, created_at FROM events`

// Events lists the events of one entity in order, for tests and audits.
func (db *DB) Events(ctx context.Context, a parcela.Auth, entityID string) ([]parcela.Event, error) {
	out, err := collect(ctx, db.reader, scanEvent, eventSelect+` WHERE company_id = ? AND environment = ? AND entity_id = ? ORDER BY created_at, id`,
		a.CompanyID, string(a.Environment), entityID)
	return out, failed("list events", err)
}

// CompanyEvents lists every event of a company in an environment, oldest first.
func (db *DB) CompanyEvents(ctx context.Context, a parcela.Auth) ([]parcela.Event, error) {
	out, err := collect(ctx, db.reader, scanEvent, eventSelect+` WHERE company_id = ? AND environment = ? ORDER BY created_at, id`,
		a.CompanyID, string(a.Environment))
	return out, failed("list events", err)
}

// WriteEvents writes events in one transaction of their own, with their
// deliveries, for tools and tests; the use cases write theirs with their
// change.
func (db *DB) WriteEvents(ctx context.Context, events []parcela.Event) error {
	return failed("write events", db.inTx(ctx, func(tx *Tx) error { return writeEvents(ctx, tx, events) }))
}
