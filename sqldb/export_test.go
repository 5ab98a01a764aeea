package sqldb

import "parcela"

// BillListQueries exposes the listing's SQL to the query-plan test.
func BillListQueries(db *DB, a parcela.Auth, f BillFilter) (count, page string, countArgs, args []any) {
	cond, args := billListWhere(a, f)
	countSQL, countArgs := billCountQuery(f, cond, args)
	return db.rebind(countSQL), db.rebind(billListSelect + cond + billListOrder), countArgs, args
}

// LookupQueries are the hot single-entity reads, for the query-plan test.
var LookupQueries = map[string]string{
	"billings of an order": billingSelect + ` WHERE order_id = ? ORDER BY created_at, id`,
	"bills of an order":    billSelect + ` WHERE b.order_id = ? ORDER BY b.number`,
	"bills of a billing":   billSelect + ` WHERE b.billing_id = ? ORDER BY b.number`,
	"payments of a bill":   paymentSelect + ` WHERE p.bill_id IN (?) ORDER BY p.created_at, p.id`,
	"events of an entity":  `SELECT id FROM events WHERE company_id = ? AND environment = ? AND entity_id = ? ORDER BY created_at, id`,
	"attempts":             `SELECT attempted_at FROM webhook_attempts WHERE delivery_id IN (?) ORDER BY attempted_at, id`,
}

// Rebind exposes placeholder rebinding.
func Rebind(db *DB, q string) string { return db.rebind(q) }
