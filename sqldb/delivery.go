package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"parcela"
)

// FailingLimit is how long a webhook may fail everything before it is disabled.
const FailingLimit = 5 * 24 * time.Hour

// DeliveryWork is everything a delivery attempt needs.
type DeliveryWork struct {
	Delivery   parcela.Delivery
	Generation int
	Webhook    *parcela.Webhook
	Deleted    bool
	Event      Event
}

// LoadDeliveryWork reads a delivery with its webhook and event, for the worker.
func (db *DB) LoadDeliveryWork(ctx context.Context, id string) (*DeliveryWork, error) {
	var w DeliveryWork
	d := &w.Delivery
	var env, eenv, data string
	var next sql.NullInt64
	var created, updated int64
	err := db.queryRow(ctx, `SELECT d.id, d.company_id, d.environment, d.webhook_id, d.event_id, d.status, d.attempt_count, d.generation,
		d.next_attempt_at, d.created_at, d.updated_at, e.id, e.company_id, e.environment, e.entity, e.entity_id, e.event, e.data, e.created_at
		FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = ?`, id).Scan(
		&d.ID, &d.CompanyID, &env, &d.WebhookID, &d.EventID, &d.Status, &d.AttemptCount, &w.Generation, &next, &created, &updated,
		&w.Event.ID, &w.Event.CompanyID, &eenv, &w.Event.Entity, &w.Event.EntityID, &w.Event.Event, &data, &w.Event.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("delivery")
	} else if err != nil {
		return nil, err
	}
	d.Environment, w.Event.Environment, w.Event.Data = parcela.Environment(env), parcela.Environment(eenv), []byte(data)
	d.Entity, d.Event = w.Event.Entity, w.Event.Event
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = fromNullMS(next), fromMS(created), fromMS(updated)
	var deleted sql.NullInt64
	row := db.queryRow(ctx, `SELECT `+webhookColumns+`, deleted_at FROM webhooks WHERE id = ?`, d.WebhookID)
	if w.Webhook, err = scanWebhook(withTail{row, []any{&deleted}}); err != nil {
		return nil, err
	}
	w.Deleted = deleted.Valid
	return &w, nil
}

// AttemptResult is the outcome of one delivery attempt, as the worker saw it.
type AttemptResult struct {
	At           time.Time
	Status       *int
	Duration     time.Duration
	Error        *string
	ResponseBody *string
	Delivered    bool
	Gone         bool       // 410: disable the webhook
	NextAt       *time.Time // when to try again; nil: no more tries
	SkipReason   string     // the attempt was not made (webhook disabled or deleted)
}

// RecordAttempt stores an attempt and moves the delivery and its webhook on;
// a retry is scheduled in the same transaction, so none is lost or doubled.
func (db *DB) RecordAttempt(ctx context.Context, w *DeliveryWork, r AttemptResult) error {
	return db.inTx(ctx, func(tx *Tx) error {
		var gen int
		var status string
		if err := tx.queryRow(ctx, `SELECT generation, status FROM webhook_deliveries WHERE id = ?`, w.Delivery.ID).Scan(&gen, &status); err != nil {
			return err
		}
		if gen != w.Generation {
			return nil // a manual retry superseded this job
		}
		now := ms64(tx.Now)
		if _, err := tx.exec(ctx, `INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, error, response_body)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, newID(), w.Delivery.ID, ms64(r.At), r.Status, r.Duration.Milliseconds(), r.Error, r.ResponseBody); err != nil {
			return err
		}
		next, newStatus := any(nil), "failed"
		switch {
		case r.Delivered:
			newStatus = "delivered"
		case r.NextAt != nil && !r.Gone && r.SkipReason == "":
			newStatus, next = "retrying", ms64(*r.NextAt)
		}
		if _, err := tx.exec(ctx, `UPDATE webhook_deliveries SET status = ?, attempt_count = attempt_count + 1, next_attempt_at = ?, updated_at = ? WHERE id = ?`,
			newStatus, next, now, w.Delivery.ID); err != nil {
			return err
		}
		if newStatus == "retrying" {
			tx.enqueueDelivery(DeliveryArgs{DeliveryID: w.Delivery.ID, Generation: gen}, r.NextAt)
		}
		if r.SkipReason != "" {
			return nil
		}
		if r.Delivered {
			_, err := tx.exec(ctx, `UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL`, w.Webhook.ID)
			return err
		}
		if _, err := tx.exec(ctx, `UPDATE webhooks SET failing_since = COALESCE(failing_since, ?) WHERE id = ?`, now, w.Webhook.ID); err != nil {
			return err
		}
		reason := ""
		var since int64
		if err := tx.queryRow(ctx, `SELECT failing_since FROM webhooks WHERE id = ?`, w.Webhook.ID).Scan(&since); err != nil {
			return err
		}
		switch {
		case r.Gone:
			reason = "the receiver answered 410 Gone"
		case now-since >= FailingLimit.Milliseconds():
			reason = "every delivery failed for 5 days"
		}
		if reason != "" {
			_, err := tx.exec(ctx, `UPDATE webhooks SET enabled = ?, disabled_reason = ?, updated_at = ? WHERE id = ? AND enabled = ?`, false, reason, now, w.Webhook.ID, true)
			return err
		}
		return nil
	})
}

const deliverySelect = `SELECT d.id, d.company_id, d.environment, d.webhook_id, d.event_id, e.entity, e.event, d.status, d.attempt_count,
	d.next_attempt_at, d.created_at, d.updated_at FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`

func scanDelivery(row rowScanner) (*parcela.Delivery, error) {
	var d parcela.Delivery
	var env string
	var next sql.NullInt64
	var created, updated int64
	if err := row.Scan(&d.ID, &d.CompanyID, &env, &d.WebhookID, &d.EventID, &d.Entity, &d.Event, &d.Status, &d.AttemptCount, &next, &created, &updated); err != nil {
		return nil, err
	}
	d.Environment, d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = parcela.Environment(env), fromNullMS(next), fromMS(created), fromMS(updated)
	d.Attempts = []parcela.DeliveryAttempt{}
	return &d, nil
}

func (db *DB) attachAttempts(ctx context.Context, ds []*parcela.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	byID := make(map[string]*parcela.Delivery, len(ds))
	args := make([]any, 0, len(ds))
	for _, d := range ds {
		byID[d.ID] = d
		args = append(args, d.ID)
	}
	rows, err := db.query(ctx, `SELECT delivery_id, attempted_at, response_status, duration_ms, error, response_body FROM webhook_attempts
		WHERE delivery_id IN (`+placeholders(len(args))+`) ORDER BY attempted_at, id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a parcela.DeliveryAttempt
		var deliveryID string
		var at int64
		var status sql.NullInt64
		var errText, body sql.NullString
		if err := rows.Scan(&deliveryID, &at, &status, &a.DurationMS, &errText, &body); err != nil {
			return err
		}
		a.AttemptedAt, a.ResponseStatus, a.Error, a.ResponseBody = fromMS(at), nullInt(status), nullString(errText), nullString(body)
		if d := byID[deliveryID]; d != nil {
			d.Attempts = append(d.Attempts, a)
		}
	}
	return rows.Err()
}

// Deliveries lists the caller's deliveries, newest first, optionally of one webhook.
func (db *DB) Deliveries(ctx context.Context, a parcela.Auth, webhookID string, page, perPage int) ([]*parcela.Delivery, int, error) {
	cond, args := `d.company_id = ? AND d.environment = ?`, []any{a.CompanyID, string(a.Environment)}
	if webhookID != "" {
		cond += ` AND d.webhook_id = ?`
		args = append(args, webhookID)
	}
	var total int
	if err := db.queryRow(ctx, `SELECT COUNT(*) FROM webhook_deliveries d WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.query(ctx, deliverySelect+` WHERE `+cond+` ORDER BY d.created_at DESC, d.id DESC LIMIT ? OFFSET ?`, append(args, perPage, (page-1)*perPage)...)
	if err != nil {
		return nil, 0, err
	}
	var out []*parcela.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, 0, err
		}
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return out, total, db.attachAttempts(ctx, out)
}

// Delivery returns one of the caller's deliveries with its attempts.
func (db *DB) Delivery(ctx context.Context, a parcela.Auth, id string) (*parcela.Delivery, error) {
	d, err := scanDelivery(db.queryRow(ctx, deliverySelect+` WHERE d.id = ? AND d.company_id = ? AND d.environment = ?`, id, a.CompanyID, string(a.Environment)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("delivery")
	} else if err != nil {
		return nil, err
	}
	return d, db.attachAttempts(ctx, []*parcela.Delivery{d})
}

// RetryDelivery sends a delivery again now (a replay), whatever its status,
// as long as its webhook is enabled.
func (db *DB) RetryDelivery(ctx context.Context, a parcela.Auth, id string) error {
	return db.inTx(ctx, func(tx *Tx) error {
		var webhookID string
		var gen int
		err := tx.queryRow(ctx, `SELECT webhook_id, generation FROM webhook_deliveries WHERE id = ? AND company_id = ? AND environment = ?`,
			id, a.CompanyID, string(a.Environment)).Scan(&webhookID, &gen)
		if errors.Is(err, sql.ErrNoRows) {
			return parcela.NotFound("delivery")
		} else if err != nil {
			return err
		}
		w, err := webhookByID(ctx, tx.q, db, a, webhookID)
		if parcela.ErrorCode(err) == parcela.ENOTFOUND {
			return parcela.Errorf(parcela.EINVALIDSTATE, "the webhook of this delivery was deleted")
		} else if err != nil {
			return err
		}
		if !w.Enabled {
			return parcela.Errorf(parcela.EINVALIDSTATE, "the webhook is disabled; enable it with PATCH /webhooks/%s first", w.ID)
		}
		if _, err := tx.exec(ctx, `UPDATE webhook_deliveries SET status = 'pending', generation = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?`,
			gen+1, ms64(tx.Now), id); err != nil {
			return err
		}
		tx.enqueueDelivery(DeliveryArgs{DeliveryID: id, Generation: gen + 1}, nil)
		return nil
	})
}

// PendingDeliveries counts deliveries waiting to be sent, for the queue-depth gauge.
func (db *DB) PendingDeliveries(ctx context.Context) (int, error) {
	var n int
	err := db.queryRow(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying')`).Scan(&n)
	return n, err
}
