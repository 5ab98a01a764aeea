package sqldb

import "parcela"

// BillListQueries exposes the listing's SQL to the query-plan test.
func BillListQueries(db *DB, a parcela.Auth, f BillFilter) (count, page string, args []any) {
	cond, args := billListWhere(a, f)
	return db.rebind(`SELECT COUNT(*) FROM bills b WHERE ` + cond), db.rebind(billSelect + ` WHERE ` + cond + billListOrder), args
}
