package sqldb

import (
	"context"
	"time"

	"parcela"
)

// Payment intents: each committed on its own, before the provider is
// called (see parcela's issue.go). A change that stores a payment deletes
// its intent (completeIntents), so the table holds only intents still
// issuing, being voided, or voided.

// RecordIntent stores an intent to issue a payment. It is one statement,
// so on PostgreSQL it commits on its own (one round trip, not a
// transaction's three); on SQLite it joins the writer's group commit.
// Either way it is committed when RecordIntent returns, before the
// provider is called.
func (db *DB) RecordIntent(ctx context.Context, in *parcela.PaymentIntent) error {
	const q = `INSERT INTO payment_intents (id, company_id, environment, bill_id, payment_method, amount_cents, nosso_numero,
		state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	args := []any{in.ID, in.CompanyID, string(in.Environment), in.BillID, in.Method, in.AmountCents, in.NossoNumero, in.State,
		ms64(in.CreatedAt), ms64(in.UpdatedAt)}
	if db.dialect == Postgres {
		_, err := db.writer().exec(ctx, q, args...)
		db.writes.note(ctx, err)
		return failed("record payment intent", err)
	}
	return failed("record payment intent", db.inTx(ctx, func(tx *Tx) error {
		_, err := tx.r.exec(ctx, q, args...)
		return err
	}))
}

// cardAttemptsLock is the class of the PostgreSQL advisory locks that
// count one bill's card attempts in turn (RecordCardIntent).
const cardAttemptsLock = 7031

// RecordCardIntent stores a card attempt's intent if its bill's refused
// card payments since limit.Since, with its card intents still issuing,
// are fewer than limit.Max. The count and the insert are one transaction,
// run in turn for one bill: on PostgreSQL under a transaction advisory
// lock of the bill (not its row, which the bill's changes lock), on SQLite
// by its one writer. A refused attempt is stored in the change that
// deletes its intent, so an attempt is counted in flight or refused, never
// neither.
func (db *DB) RecordCardIntent(ctx context.Context, in *parcela.PaymentIntent, limit parcela.CardAttemptLimit) error {
	const count = `SELECT (SELECT count(*) FROM payments WHERE bill_id = ? AND payment_method = ? AND status = ? AND created_at > ?)
		+ (SELECT count(*) FROM payment_intents WHERE bill_id = ? AND payment_method = ? AND state = ?)`
	const insert = `INSERT INTO payment_intents (id, company_id, environment, bill_id, payment_method, amount_cents, nosso_numero,
		state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	exhausted := false
	err := db.inTx(ctx, func(tx *Tx) error {
		if db.dialect == Postgres {
			if _, err := tx.r.exec(ctx, `SELECT pg_advisory_xact_lock(?, hashtext(?))`, cardAttemptsLock, in.BillID); err != nil {
				return err
			}
		}
		var n int
		if err := tx.r.queryRow(ctx, count, in.BillID, parcela.MethodCreditCard, parcela.PaymentRefused, ms64(limit.Since),
			in.BillID, parcela.MethodCreditCard, parcela.IntentIssuing).Scan(&n); err != nil {
			return err
		}
		if exhausted = n >= limit.Max; exhausted {
			return nil
		}
		_, err := tx.r.exec(ctx, insert, in.ID, in.CompanyID, string(in.Environment), in.BillID, in.Method, in.AmountCents, in.NossoNumero,
			in.State, ms64(in.CreatedAt), ms64(in.UpdatedAt))
		return err
	})
	if err != nil {
		return failed("record card intent", err)
	}
	if exhausted {
		return parcela.ErrCardAttemptsExhausted
	}
	return nil
}

// StartVoid claims an issuing (or already voiding) intent for voiding.
func (db *DB) StartVoid(ctx context.Context, id string, at time.Time) error {
	return failed("void payment intent", db.inTx(ctx, func(tx *Tx) error {
		return tx.r.guarded(ctx, "payment intent", id, `UPDATE payment_intents SET state = ?, updated_at = ? WHERE id = ? AND state IN (?, ?)`,
			parcela.IntentVoiding, ms64(at), id, parcela.IntentIssuing, parcela.IntentVoiding)
	}))
}

// FinishVoid records that a voiding intent's payment was canceled at the provider.
func (db *DB) FinishVoid(ctx context.Context, id string, at time.Time) error {
	return failed("void payment intent", db.inTx(ctx, func(tx *Tx) error {
		return tx.r.guarded(ctx, "payment intent", id, `UPDATE payment_intents SET state = ?, updated_at = ? WHERE id = ? AND state = ?`,
			parcela.IntentVoided, ms64(at), id, parcela.IntentVoiding)
	}))
}

// completeIntents deletes the intents of the payments a change stores; an
// intent no longer issuing (claimed for voiding) fails the change.
func completeIntents(ctx context.Context, pl *pipeline, ps []*parcela.Payment) error {
	for _, p := range ps {
		if err := pl.guarded(ctx, "payment intent", p.ID, `DELETE FROM payment_intents WHERE id = ? AND state = ?`,
			p.ID, parcela.IntentIssuing); err != nil {
			return err
		}
	}
	return nil
}

// PaymentIntents lists a company's intents in an environment, oldest
// first, for tests and audits: the use cases never read one back.
func (db *DB) PaymentIntents(ctx context.Context, a parcela.Auth) ([]*parcela.PaymentIntent, error) {
	out, err := collect(ctx, db.reader, func(row rowScanner) (*parcela.PaymentIntent, error) {
		var in parcela.PaymentIntent
		var env string
		var created, updated int64
		err := row.Scan(&in.ID, &in.CompanyID, &env, &in.BillID, &in.Method, &in.AmountCents, &in.NossoNumero, &in.State, &created, &updated)
		in.Environment, in.CreatedAt, in.UpdatedAt = parcela.Environment(env), fromMS(created), fromMS(updated)
		return &in, err
	}, `SELECT id, company_id, environment, bill_id, payment_method, amount_cents, nosso_numero, state, created_at, updated_at
		FROM payment_intents WHERE company_id = ? AND environment = ? ORDER BY created_at, id`, a.CompanyID, string(a.Environment))
	return out, failed("list payment intents", err)
}
