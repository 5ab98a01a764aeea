package sqldb

import (
	"context"
	"encoding/json"
	"slices"
	"unsafe"

	"parcela"
)

// writeEvents records events in the transaction of the change they
// describe, in one INSERT, and queues their webhook deliveries there too.
// It flushes p: the deliveries depend on the webhooks read with it.
func writeEvents(ctx context.Context, p *pipeline, events []parcela.Event) error {
	if len(events) > 0 {
		args := make([]any, 0, 8*len(events))
		for _, e := range events {
			args = append(args, e.ID, e.CompanyID, string(e.Environment), e.Entity, e.EntityID, e.Event, dataText(e.Data), ms64(e.CreatedAt))
		}
		if err := p.insertMany(ctx, `INSERT INTO events (id, company_id, environment, entity, entity_id, event, data, created_at)`,
			`(?, ?, ?, ?, ?, ?, ?, ?)`, 8, args); err != nil {
			return err
		}
		if err := readSubscriptions(ctx, p, events); err != nil {
			return err
		}
	}
	if err := p.flush(ctx); err != nil {
		return err
	}
	return fanOut(ctx, p.tx, events)
}

// readSubscriptions reads, in one query, the webhooks of every entity the
// events name (a charge's three), into the cache fan-out looks in
// (Tx.subscriptions); entities without one are cached empty. Events of
// more than one company or environment are left to fan-out.
func readSubscriptions(ctx context.Context, p *pipeline, events []parcela.Event) error {
	first := &events[0]
	var entities []string
	for i := range events {
		e := &events[i]
		if e.CompanyID != first.CompanyID || e.Environment != first.Environment {
			return nil
		}
		if !slices.Contains(entities, e.Entity) {
			entities = append(entities, e.Entity)
		}
	}
	// Filled when the query's rows are read: on PostgreSQL at the flush,
	// before fan-out looks.
	if p.tx.hooks == nil {
		p.tx.hooks = map[string][]subscription{}
	}
	key := first.CompanyID + "|" + string(first.Environment) + "|"
	args := []any{first.CompanyID, string(first.Environment), true}
	for _, e := range entities {
		p.tx.hooks[key+e] = nil
		args = append(args, e)
	}
	return p.query(ctx, func(row rowScanner) error {
		var entity, events string
		var s subscription
		if err := row.Scan(&entity, &s.id, &events); err != nil {
			return err
		}
		s.events = splitList(events)
		p.tx.hooks[key+entity] = append(p.tx.hooks[key+entity], s)
		return nil
	}, `SELECT entity, id, events FROM webhooks WHERE company_id = ? AND environment = ? AND enabled = ? AND deleted_at IS NULL
		AND entity IN (`+placeholders(len(entities))+`)`, args...)
}

// dataText is an event's data as the text the column stores, sharing its
// bytes: a charge's events hold about 27 KB of JSON, copied once more by
// string() for nothing. Nothing writes an event's data once rendered, and
// both drivers copy the text when they bind it, before writeEvents returns.
func dataText(data json.RawMessage) string {
	return unsafe.String(unsafe.SliceData(data), len(data))
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
	return failed("write events", db.inTx(ctx, func(tx *Tx) error { return writeEvents(ctx, tx.pipeline(), events) }))
}
