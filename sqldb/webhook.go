package sqldb

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"parcela"
)

const webhookColumns = `id, company_id, environment, name, url, entity, events, verb, secret, previous_secret, previous_secret_until,
	enabled, disabled_reason, failing_since, created_at, updated_at`

const webhookSelect = `SELECT ` + webhookColumns + ` FROM webhooks`

func scanWebhook(row rowScanner) (*parcela.Webhook, error) {
	var w parcela.Webhook
	var env, events string
	var prev, reason sql.NullString
	var prevUntil, failing sql.NullInt64
	var created, updated int64
	err := row.Scan(&w.ID, &w.CompanyID, &env, &w.Name, &w.URL, &w.Entity, &events, &w.Verb, &w.Secret, &prev, &prevUntil,
		&w.Enabled, &reason, &failing, &created, &updated)
	if err != nil {
		return nil, err
	}
	w.Environment, w.Events = parcela.Environment(env), splitList(events)
	w.PreviousSecret, w.PreviousSecretUntil = nullString(prev), fromNullMS(prevUntil)
	w.DisabledReason, w.FailingSince = nullString(reason), fromNullMS(failing)
	w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
	return &w, nil
}

// CreateWebhook stores a new webhook if its company has fewer than limit
// webhooks in its environment (a *parcela.Conflict otherwise). The
// company's row is locked while they are counted, so concurrent creations
// count one after the other (SQLite's single writer does the same); FOR NO
// KEY UPDATE, which the key-share locks of the company's other writes (an
// order, a bill, an event referring to it) do not wait for, nor it for them.
func (db *DB) CreateWebhook(ctx context.Context, w *parcela.Webhook, limit int) error {
	return failed("create webhook", db.inTxOf(ctx, parcela.Auth{CompanyID: w.CompanyID, Environment: w.Environment}, func(tx *Tx) error {
		var id string
		if err := tx.r.queryRow(ctx, `SELECT id FROM companies WHERE id = ?`+db.lockRows("NO KEY UPDATE"), w.CompanyID).Scan(&id); err != nil {
			return notFound(err, "company")
		}
		var n int
		if err := tx.r.queryRow(ctx, `SELECT COUNT(*) FROM webhooks WHERE company_id = ? AND environment = ? AND deleted_at IS NULL`,
			w.CompanyID, string(w.Environment)).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return &parcela.Conflict{Entity: "company's webhooks", ID: w.CompanyID}
		}
		_, err := tx.r.exec(ctx, `INSERT INTO webhooks (id, company_id, environment, name, url, entity, events, verb, secret, enabled, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.ID, w.CompanyID, string(w.Environment), w.Name, w.URL, w.Entity,
			strings.Join(w.Events, ","), w.Verb, w.Secret, w.Enabled, ms64(w.CreatedAt), ms64(w.UpdatedAt))
		return err
	}))
}

// Webhooks lists the caller's webhooks, oldest first.
func (db *DB) Webhooks(ctx context.Context, a parcela.Auth) ([]*parcela.Webhook, error) {
	out, err := collect(ctx, db.reader, scanWebhook, webhookSelect+` WHERE company_id = ? AND environment = ? AND deleted_at IS NULL ORDER BY created_at, id`,
		a.CompanyID, string(a.Environment))
	if out == nil {
		out = []*parcela.Webhook{}
	}
	return out, failed("list webhooks", err)
}

// Webhook returns one of the caller's webhooks.
func (db *DB) Webhook(ctx context.Context, a parcela.Auth, id string) (*parcela.Webhook, error) {
	w, err := scanWebhook(db.reader.queryRow(ctx, webhookSelect+` WHERE id = ? AND company_id = ? AND environment = ? AND deleted_at IS NULL`,
		id, a.CompanyID, string(a.Environment)))
	return w, failed("read webhook", notFound(err, "webhook"))
}

// UpdateWebhook writes a webhook's settings if they are still were, and
// its state only if state; a deleted one, or one whose settings moved, is
// a conflict (the PATCH reads again: not found, or decided anew). The
// columns left out are others' to write (the delivery worker's failure
// record, a rotation's secrets): a PATCH read before they changed must not
// put back what it read.
func (db *DB) UpdateWebhook(ctx context.Context, w *parcela.Webhook, were parcela.WebhookSettings, state bool) error {
	q, args := `UPDATE webhooks SET name = ?, url = ?, events = ?, verb = ?, updated_at = ?`,
		[]any{w.Name, w.URL, strings.Join(w.Events, ","), w.Verb, ms64(w.UpdatedAt)}
	if state {
		q += `, enabled = ?, disabled_reason = ?, failing_since = ?`
		args = append(args, w.Enabled, w.DisabledReason, msPtr(w.FailingSince))
	} else if w.URL != were.URL {
		// A new address starts its five days of failures afresh (Apply).
		q += `, failing_since = NULL`
	}
	return failed("update webhook", db.inTxOf(ctx, parcela.Auth{CompanyID: w.CompanyID, Environment: w.Environment}, func(tx *Tx) error {
		return tx.r.guarded(ctx, "webhook", w.ID, q+` WHERE id = ? AND deleted_at IS NULL AND name = ? AND url = ? AND events = ? AND verb = ?`,
			append(args, w.ID, were.Name, were.URL, strings.Join(were.Events, ","), were.Verb)...)
	}))
}

// RotateWebhookSecret writes a webhook's secrets if its secret is still
// from; otherwise (rotated meanwhile, or deleted) it is a conflict, and the
// rotation reads again. w is then the webhook as stored, read back in the
// same transaction: a rename, or the delivery worker's failure record,
// since the rotation's read stands (only the secrets are written), and the
// answer, stored under an Idempotency-Key, showed the webhook as read.
func (db *DB) RotateWebhookSecret(ctx context.Context, w *parcela.Webhook, from string) error {
	return failed("rotate webhook secret", db.inTxOf(ctx, parcela.Auth{CompanyID: w.CompanyID, Environment: w.Environment}, func(tx *Tx) error {
		if err := tx.r.guarded(ctx, "webhook", w.ID, `UPDATE webhooks SET secret = ?, previous_secret = ?, previous_secret_until = ?, updated_at = ?
			WHERE id = ? AND secret = ? AND deleted_at IS NULL`, w.Secret, w.PreviousSecret, msPtr(w.PreviousSecretUntil), ms64(w.UpdatedAt), w.ID, from); err != nil {
			return err
		}
		stored, err := scanWebhook(tx.r.queryRow(ctx, webhookSelect+` WHERE id = ?`, w.ID))
		if err != nil {
			return err
		}
		*w = *stored
		return nil
	}))
}

// DeleteWebhook removes a webhook; its delivery log is kept.
func (db *DB) DeleteWebhook(ctx context.Context, a parcela.Auth, id string, at time.Time) error {
	return failed("delete webhook", db.inTxOf(ctx, a, func(tx *Tx) error {
		res, err := tx.r.exec(ctx, `UPDATE webhooks SET deleted_at = ?, enabled = ?, updated_at = ? WHERE id = ? AND company_id = ? AND environment = ? AND deleted_at IS NULL`,
			ms64(at), false, ms64(at), id, a.CompanyID, string(a.Environment))
		return oneRow(res, err, "webhook")
	}))
}

// oneRow makes a write that matched no row not found.
func oneRow(res sql.Result, err error, what string) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return parcela.NotFound(what)
	}
	return nil
}
