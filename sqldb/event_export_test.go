package sqldb

import (
	"context"

	"parcela"
)

// WriteTestEvents writes n events of one entity in one writeEvents call,
// enough of them to span several INSERTs.
func WriteTestEvents(ctx context.Context, db *DB, a parcela.Auth, entity, event string, n int) error {
	return db.inTx(ctx, func(tx *Tx) error {
		events := make([]Event, 0, n)
		for i := range n {
			e, err := newEvent(a.CompanyID, a.Environment, entity, newID(), event, map[string]int{"i": i}, tx.Now)
			if err != nil {
				return err
			}
			events = append(events, e)
		}
		return writeEvents(ctx, tx, events)
	})
}
