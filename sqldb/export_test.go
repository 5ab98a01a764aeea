package sqldb

import (
	"context"
	"fmt"
	"strings"

	"parcela"
)

// BillListQueries exposes the listing's SQL to the query-plan test, the
// page's arguments for its second page of 100.
func BillListQueries(db *DB, a parcela.Auth, f parcela.BillFilter) (count, page string, countArgs, args []any) {
	l := billListing(db.dialect, a, f)
	countSQL, countArgs := l.countAndRatesQuery()
	return db.binder.bind(countSQL), db.binder.bind(l.pageQuery(db.dialect)), countArgs, l.pageArgs(db.dialect, 100, 100)
}

// LookupQueries are the hot single-entity reads, for the query-plan test.
var LookupQueries = map[string]string{
	"billings of an order":                billingSelect + ` WHERE bl.order_id = ? ORDER BY bl.created_at, bl.id`,
	"bills of an order":                   billSelect + ` WHERE b.order_id = ? ORDER BY b.number`,
	"bills of a billing":                  billSelect + ` WHERE b.order_id = ? AND b.billing_id = ? ORDER BY b.number`,
	"payments of a bill":                  paymentSelect + ` WHERE p.bill_id IN (?) ORDER BY p.created_at, p.id`,
	"events of an entity":                 `SELECT id FROM events WHERE company_id = ? AND environment = ? AND entity_id = ? ORDER BY created_at, id`,
	"attempts":                            `SELECT attempted_at FROM webhook_attempts WHERE delivery_id IN (?) ORDER BY attempted_at, id`,
	"delivery work":                       deliveryWorkSelect + ` WHERE d.id IN (?)`,
	"offer":                               offerRead.wide,
	"offer's version":                     offerRead.narrow,
	"offer of an order":                   offerOfOrderRead.wide,
	"version of an order's offer":         offerOfOrderRead.narrow,
	"public offer's version":              publicOfferRead.narrow,
	"checkout's bill and offer's version": billOfferQuery,
	"order of a form":                     orderOfFormQuery,
}

// SeatsSoldQuery counts an offer's seats sold, for the query-plan test.
const SeatsSoldQuery = seatsSold

// Rebind exposes placeholder rebinding.
func Rebind(db *DB, q string) string { return db.binder.bind(q) }

// RecordAttempts writes records as one group-committed batch, in order.
func RecordAttempts(db *DB, recs []parcela.AttemptRecord) error {
	batch := make([]*pendingAttempt, len(recs))
	for i := range recs {
		batch[i] = &pendingAttempt{rec: &recs[i]}
	}
	return db.writeAttemptBatch(context.Background(), batch)
}

// RecordAttemptsOnce writes records as one batch in one transaction,
// without running it again when the engine fails it transiently.
func RecordAttemptsOnce(db *DB, recs []parcela.AttemptRecord) error {
	batch := make([]*pendingAttempt, len(recs))
	for i := range recs {
		batch[i] = &pendingAttempt{rec: &recs[i]}
	}
	ctx := context.Background()
	return db.tryTx(ctx, func(tx *Tx) error { return db.writeAttemptsIn(ctx, tx, batch) })
}

// WideOffer reads one of a's offers with its wide statement, past the
// cache, as the cache's tests' reference.
func WideOffer(db *DB, a parcela.Auth, id string) (*parcela.Offer, error) {
	var version int64
	o, err := collectOfferPage(context.Background(), db.reader, []any{&version}, offerRead.wide, a.CompanyID, id, string(a.Environment), id)
	return o, notFound(err, "offer")
}

// CloneOffer exposes the cache's copy.
var CloneOffer = cloneOffer

// RunMigrationUp runs the Up section of the migration file name (in
// migrations/) on db again, as goose runs it: a data migration's test
// writes rows as an older binary did, then migrates them.
func RunMigrationUp(db *DB, name string) error {
	b, err := migrations.ReadFile("migrations/" + name)
	if err != nil {
		return err
	}
	s := string(b)
	up, down := strings.Index(s, "-- +goose Up"), strings.Index(s, "-- +goose Down")
	if up < 0 || down < up {
		return fmt.Errorf("%s: no Up section", name)
	}
	_, err = db.write.ExecContext(context.Background(), s[up:down])
	return err
}

// RunBoletoExpiryMigration runs migration 28 (Go) on db again, as
// RunMigrationUp does a file's, on company's boletos alone: the tests
// share a database.
func RunBoletoExpiryMigration(db *DB, company string) error {
	tx, err := db.write.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := moveEarlyBoletoExpiries(context.Background(), tx, db.binder, company); err != nil {
		return err
	}
	return tx.Commit()
}
