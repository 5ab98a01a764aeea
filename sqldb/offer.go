package sqldb

import (
	"context"
	"database/sql"
	"strings"

	"parcela"
)

const offerColumns = `id, company_id, environment, product_id, name, amount_cents, availability, expires_at, seats, seats_taken,
	exclude_from_campaign, created_at, updated_at`

const offerSelect = `SELECT ` + offerColumns + ` FROM offers`

func scanOffer(row rowScanner) (*parcela.Offer, error) {
	var o parcela.Offer
	var env string
	var expires, seats sql.NullInt64
	var created, updated int64
	err := row.Scan(&o.ID, &o.CompanyID, &env, &o.ProductID, &o.Name, &o.AmountCents, &o.Availability, &expires, &seats, &o.SeatsTaken,
		&o.ExcludeFromCampaign, &created, &updated)
	if err != nil {
		return nil, err
	}
	o.Environment = parcela.Environment(env)
	o.ExpiresAt, o.Seats = fromNullMS(expires), nullInt(seats)
	o.CreatedAt, o.UpdatedAt = fromMS(created), fromMS(updated)
	return &o, nil
}

// CreateOffer stores a new offer with its payment configurations, if its
// product's full amount still covers it (a conflict otherwise). The
// product's row is share-locked, so a PATCH lowering the amount (which
// locks it first, UpdateProduct) either waits for this offer and then
// counts it, or is read here.
func (db *DB) CreateOffer(ctx context.Context, o *parcela.Offer) error {
	return failed("create offer", db.inTxOf(ctx, parcela.Auth{CompanyID: o.CompanyID, Environment: o.Environment}, func(tx *Tx) error { return db.insertOffer(ctx, tx, o) }))
}

// insertOffer stores o in tx if it costs no more than its product (a
// *parcela.Conflict otherwise).
func (db *DB) insertOffer(ctx context.Context, tx *Tx, o *parcela.Offer) error {
	var full int64
	if err := tx.r.queryRow(ctx, `SELECT full_amount_cents FROM products WHERE id = ?`+db.lockRows("SHARE"), o.ProductID).Scan(&full); err != nil {
		return notFound(err, "product")
	}
	if o.AmountCents > full {
		return &parcela.Conflict{Entity: "product", ID: o.ProductID}
	}
	_, err := tx.r.exec(ctx, `INSERT INTO offers (id, company_id, environment, product_id, name, amount_cents, availability, expires_at, seats,
		seats_taken, exclude_from_campaign, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
		o.ID, o.CompanyID, string(o.Environment), o.ProductID, o.Name, o.AmountCents, o.Availability, msPtr(o.ExpiresAt), o.Seats,
		o.ExcludeFromCampaign, ms64(o.CreatedAt), ms64(o.UpdatedAt))
	if err != nil {
		return err
	}
	return insertConfigurations(ctx, tx, o.PaymentConfigurations)
}

// offerRead reads one of a company's offers as a payer's page does (see
// offerHeadColumns): a row of the company, the offer and its product, then
// a row per configuration; its narrow form finds the version of the kept
// copy (offerCache). An order and its charge each read the offer, and with
// its company it was four statements (on PostgreSQL two round trips); it
// is one. Its arguments: the company, the offer, the environment, the
// offer.
var offerRead = newOfferStatements(`co.id = ? AND o.id = ? AND o.environment = ?`, `?`, 3)

// offerOfOrderRead is offerRead for the offer of an order, found by a
// subquery so that it can share a round trip with the order's own read.
// Its arguments: the company, the environment, then the order, the company
// and the environment twice.
var offerOfOrderRead = newOfferStatements(`co.id = ? AND o.environment = ? AND o.id = (`+orderOffer+`)`, `(`+orderOffer+`)`, 5)

// orderOffer is the offer id of one of a company's orders, in an environment.
const orderOffer = `SELECT offer_id FROM orders WHERE id = ? AND company_id = ? AND environment = ?`

// loadOffer reads an offer of the caller with its product, the product's
// company (with its address) and its configurations.
func (db *DB) loadOffer(ctx context.Context, a parcela.Auth, id string) (*parcela.Offer, error) {
	o, err := db.cachedOffer(ctx, db.reader, offerRead, a.CompanyID, id, string(a.Environment), id)
	return o, notFound(err, "offer")
}

// attachOfferParts loads the products and configurations of offers in two
// queries, however many offers there are.
func attachOfferParts(ctx context.Context, r runner, a parcela.Auth, offers []*parcela.Offer) error {
	if len(offers) == 0 {
		return nil
	}
	byID := make(map[string]*parcela.Offer, len(offers))
	byProduct := map[string][]*parcela.Offer{}
	var offerIDs, productIDs []any
	for _, o := range offers {
		byID[o.ID] = o
		offerIDs = append(offerIDs, o.ID)
		if _, seen := byProduct[o.ProductID]; !seen {
			productIDs = append(productIDs, o.ProductID)
		}
		byProduct[o.ProductID] = append(byProduct[o.ProductID], o)
	}
	products, err := collect(ctx, r, scanProduct, productSelect+` WHERE p.id IN (`+placeholders(len(productIDs))+`) AND p.company_id = ? AND p.environment = ?`,
		append(productIDs, a.CompanyID, string(a.Environment))...)
	if err != nil {
		return err
	}
	for _, p := range products {
		for _, o := range byProduct[p.ID] {
			o.Product = p
		}
	}
	configs, err := collect(ctx, r, scanConfiguration, configurationSelect+` WHERE offer_id IN (`+placeholders(len(offerIDs))+`) ORDER BY offer_id, position`, offerIDs...)
	for _, pc := range configs {
		o := byID[pc.OfferID]
		o.PaymentConfigurations = append(o.PaymentConfigurations, pc)
	}
	return err
}

// Offer returns one of the caller's offers with its product, the product's
// company and its configurations.
func (db *DB) Offer(ctx context.Context, a parcela.Auth, id string) (*parcela.Offer, error) {
	o, err := db.loadOffer(ctx, a, id)
	return o, failed("read offer", err)
}

// Offers lists the caller's offers, newest first.
func (db *DB) Offers(ctx context.Context, a parcela.Auth, p parcela.Page) ([]*parcela.Offer, int, error) {
	r, done, err := db.reader.pagesOf(a, p).session(ctx)
	if err != nil {
		return nil, 0, failed("list offers", err)
	}
	defer done()
	var total int
	if err := r.queryRow(ctx, `SELECT COUNT(*) FROM offers WHERE company_id = ? AND environment = ?`, a.CompanyID, string(a.Environment)).Scan(&total); err != nil {
		return nil, 0, failed("count offers", err)
	}
	out, err := collect(ctx, r, scanOffer, offerSelect+` WHERE company_id = ? AND environment = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
		a.CompanyID, string(a.Environment), p.PerPage, (p.Page-1)*p.PerPage)
	if err == nil {
		err = attachOfferParts(ctx, r, a, out)
	}
	return out, atLeastShown(total, p, len(out)), failed("list offers", err)
}

// seatsSold counts the billings charged from an offer (renegotiations,
// which carry an origin, take no seat).
const seatsSold = `SELECT COUNT(*) FROM billings bl JOIN orders o ON o.id = bl.order_id
	WHERE o.company_id = ? AND o.environment = ? AND o.offer_id = ? AND bl.origin_billing_id IS NULL AND o.status <> 'canceled'`

// SeatsSold counts the charged orders of one of the caller's offers that
// are not canceled, as releaseSeat keeps the count.
//
// On SQLite it reads the offer's running count (sold) in the same
// statement, so in the same snapshot: UpdateOffer takes the count then as
// this count plus what the running count moved since, and counts nothing
// on the single writer.
func (db *DB) SeatsSold(ctx context.Context, a parcela.Auth, offerID string) (sold, mark int, err error) {
	q, args := seatsSold, []any{a.CompanyID, string(a.Environment), offerID}
	if db.dialect == SQLite {
		q, args = `SELECT (`+seatsSold+`), COALESCE((SELECT sold FROM offers WHERE id = ?), 0)`, append(args, offerID)
	} else {
		q = `SELECT (` + seatsSold + `), 0`
	}
	err = db.reader.queryRow(ctx, q, args...).Scan(&sold, &mark)
	return sold, mark, failed("count seats sold", err)
}

// UpdateOffer writes an offer's fields if the offer is as the update was
// decided on (a conflict otherwise: the PATCH is decided again on the
// offer as it stands). The offer's row is locked first: charges share-lock
// it (takeSeat), so this waits for them and a count of the seats sold sees
// all their billings. FOR NO KEY UPDATE: the key-share lock of an order being
// created for the offer (its reference to it) neither waits for it nor
// holds it up.
func (db *DB) UpdateOffer(ctx context.Context, u parcela.OfferUpdate) error {
	o := u.Offer
	return failed("update offer", db.inTxOf(ctx, parcela.Auth{CompanyID: u.Offer.CompanyID, Environment: u.Offer.Environment}, func(tx *Tx) error {
		var seats, expires sql.NullInt64
		var taken, sold int
		var name, availability string
		var excluded bool
		soldColumn := "0"
		if db.dialect == SQLite {
			soldColumn = "sold"
		}
		if err := tx.r.queryRow(ctx, `SELECT seats, seats_taken, name, availability, expires_at, exclude_from_campaign, `+soldColumn+` FROM offers WHERE id = ?`+db.lockRows("NO KEY UPDATE"),
			o.ID).Scan(&seats, &taken, &name, &availability, &expires, &excluded, &sold); err != nil {
			return notFound(err, "offer")
		}
		was := u.Were
		moved := seats.Valid != (u.SeatsWere != nil) || (seats.Valid && int(seats.Int64) != *u.SeatsWere) ||
			name != was.Name || availability != was.Availability || excluded != was.ExcludeFromCampaign ||
			expires.Valid != (was.ExpiresAt != nil) || (expires.Valid && expires.Int64 != ms64(*was.ExpiresAt))
		if !moved && u.SeatsWere == nil && o.Seats != nil {
			// Offers without a limit keep no count: it was counted. SQLite
			// keeps every offer's running count (sold), so the count is not
			// run on its single writer, where one offer's 300,000 sales held
			// every company's writes for most of a second (an audit): it is
			// the reader's count plus what the running count moved since
			// (a sale or a cancelation between them moves both by one), and
			// a running count gone apart from it (rows written past
			// takeSeat) is set to it.
			if db.dialect == SQLite {
				if taken = u.TakenWere + sold - u.MarkWere; taken != sold {
					if _, err := tx.r.exec(ctx, `UPDATE offers SET sold = ? WHERE id = ?`, taken, o.ID); err != nil {
						return err
					}
				}
			} else {
				db.fault(ctx, CountSeatsInTx)
				if err := tx.r.queryRow(ctx, seatsSold, o.CompanyID, string(o.Environment), o.ID).Scan(&taken); err != nil {
					return err
				}
			}
		}
		if moved {
			return &parcela.Conflict{Entity: "offer", ID: o.ID}
		}
		if o.Seats != nil {
			// The seats taken now, counted exactly under the writer (or the
			// row's lock), are written and answered: a sale between the
			// PATCH's read and its write was a conflict, and an offer that
			// kept selling had every decision refused (a review). A limit
			// below them is decided again, and refused there.
			if taken > *o.Seats {
				return &parcela.Conflict{Entity: "offer", ID: o.ID}
			}
			o.SeatsTaken = taken
		}
		_, err := tx.r.exec(ctx, `UPDATE offers SET name = ?, availability = ?, expires_at = ?, seats = ?, seats_taken = ?, exclude_from_campaign = ?,
			updated_at = ? WHERE id = ?`,
			o.Name, o.Availability, msPtr(o.ExpiresAt), o.Seats, o.SeatsTaken, o.ExcludeFromCampaign, ms64(o.UpdatedAt), o.ID)
		return err
	}))
}

const configurationColumns = `id, offer_id, position, payment_type, financed_type, payment_methods, allowed_down_payment_methods,
	availability, expires_in, interest_rate, max_installments, max_down_payment_installments, min_installment_cents, down_payment_type,
	down_payment_value, registration_fee, take_rate_type, take_rate_value, created_at, updated_at`

const configurationSelect = `SELECT ` + configurationColumns + ` FROM payment_configurations`

func scanConfiguration(row rowScanner) (*parcela.PaymentConfiguration, error) {
	var pc parcela.PaymentConfiguration
	var financed, dpType sql.NullString
	var methods, allowed string
	var maxDP sql.NullInt64
	var created, updated int64
	err := row.Scan(&pc.ID, &pc.OfferID, &pc.Position, &pc.PaymentType, &financed, &methods, &allowed, &pc.Availability, &pc.ExpiresIn,
		rate(&pc.InterestRate), &pc.MaxInstallments, &maxDP, &pc.MinInstallmentCents, &dpType, rate(&pc.DownPaymentValue),
		rate(&pc.RegistrationFee), &pc.TakeRateType, rate(&pc.TakeRateValue), &created, &updated)
	if err != nil {
		return nil, err
	}
	pc.FinancedType, pc.MaxDownPaymentInstallments = nullString(financed), nullInt(maxDP)
	if dpType.Valid {
		t := parcela.DownPaymentType(dpType.String)
		pc.DownPaymentType = &t
	}
	pc.PaymentMethods, pc.AllowedDownPaymentMethods = splitList(methods), splitList(allowed)
	pc.CreatedAt, pc.UpdatedAt = fromMS(created), fromMS(updated)
	return &pc, nil
}

func configurationByID(ctx context.Context, r runner, id string) (*parcela.PaymentConfiguration, error) {
	pc, err := scanConfiguration(r.queryRow(ctx, configurationSelect+` WHERE id = ?`, id))
	return pc, notFound(err, "payment configuration")
}

func insertConfigurations(ctx context.Context, tx *Tx, pcs []*parcela.PaymentConfiguration) error {
	args := make([]any, 0, 20*len(pcs))
	for _, pc := range pcs {
		var dpType any
		if pc.DownPaymentType != nil {
			dpType = string(*pc.DownPaymentType)
		}
		args = append(args, pc.ID, pc.OfferID, pc.Position, pc.PaymentType, pc.FinancedType, strings.Join(pc.PaymentMethods, ","),
			strings.Join(pc.AllowedDownPaymentMethods, ","), pc.Availability, pc.ExpiresIn, pc.InterestRate.String(), pc.MaxInstallments,
			pc.MaxDownPaymentInstallments, pc.MinInstallmentCents, dpType, pc.DownPaymentValue.String(), pc.RegistrationFee.String(),
			pc.TakeRateType, pc.TakeRateValue.String(), ms64(pc.CreatedAt), ms64(pc.UpdatedAt))
	}
	return tx.insertMany(ctx, `INSERT INTO payment_configurations (id, offer_id, position, payment_type, financed_type, payment_methods,
		allowed_down_payment_methods, availability, expires_in, interest_rate, max_installments, max_down_payment_installments,
		min_installment_cents, down_payment_type, down_payment_value, registration_fee, take_rate_type, take_rate_value, created_at, updated_at)`,
		`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, 20, args)
}
