package sqldb

import "parcela"

// Query is a statement with its arguments, for the query-plan tests.
type Query struct {
	SQL  string
	Args []any
}

// SweepQueries exposes the bill sweeps' selections to the query-plan test.
func SweepQueries(db *DB, d parcela.Due) map[string]Query {
	out := map[string]Query{}
	for name, sel := range map[string]func(parcela.Due) (string, []any){
		"installments to issue": installmentsToIssue,
		"late installments":     lateInstallments,
		"lapsed first bills":    lapsedFirstBills,
	} {
		q, args := sel(d)
		out[name] = Query{db.binder.bind(q), args}
	}
	return out
}
