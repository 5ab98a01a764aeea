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

// AllSweepQueries is SweepQueries with the selections of payments and
// intents too.
func AllSweepQueries(db *DB, d parcela.Due) map[string]Query {
	out := SweepQueries(db, d)
	q, args := expiredPayments(d)
	out["expired payments"] = Query{db.binder.bind(q), args}
	q, args = staleIntents(d, d.Now.Add(-parcela.IntentTimeout))
	out["stale intents"] = Query{db.binder.bind(q), args}
	return out
}
