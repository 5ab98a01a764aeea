package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"parcela"
	"parcela/webhook"
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

// CreateWebhook validates and stores a webhook with a new signing secret.
func (db *DB) CreateWebhook(ctx context.Context, a parcela.Auth, req parcela.WebhookRequest) (*parcela.Webhook, error) {
	w := &parcela.Webhook{CompanyID: a.CompanyID, Environment: a.Environment, Enabled: true}
	if err := w.Apply(req, true); err != nil {
		return nil, err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	w.Secret = secret
	err = db.inTx(ctx, func(tx *Tx) error {
		w.ID, w.CreatedAt, w.UpdatedAt = newID(), tx.Now, tx.Now
		_, err := tx.exec(ctx, `INSERT INTO webhooks (id, company_id, environment, name, url, entity, events, verb, secret, enabled, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.ID, w.CompanyID, string(w.Environment), w.Name, w.URL, w.Entity,
			strings.Join(w.Events, ","), w.Verb, w.Secret, true, ms64(w.CreatedAt), ms64(w.UpdatedAt))
		return err
	})
	return w, err
}

// Webhooks lists the caller's webhooks, oldest first.
func (db *DB) Webhooks(ctx context.Context, a parcela.Auth) ([]*parcela.Webhook, error) {
	rows, err := db.query(ctx, webhookSelect+` WHERE company_id = ? AND environment = ? AND deleted_at IS NULL ORDER BY created_at, id`, a.CompanyID, string(a.Environment))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*parcela.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

func webhookByID(ctx context.Context, q querier, db *DB, a parcela.Auth, id string) (*parcela.Webhook, error) {
	w, err := scanWebhook(q.QueryRowContext(ctx, db.rebind(webhookSelect+` WHERE id = ? AND company_id = ? AND environment = ? AND deleted_at IS NULL`),
		id, a.CompanyID, string(a.Environment)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, parcela.NotFound("webhook")
	}
	return w, err
}

// Webhook returns one of the caller's webhooks.
func (db *DB) Webhook(ctx context.Context, a parcela.Auth, id string) (*parcela.Webhook, error) {
	return webhookByID(ctx, db.reader, db, a, id)
}

// UpdateWebhook patches a webhook; enabling it clears its failure record.
func (db *DB) UpdateWebhook(ctx context.Context, a parcela.Auth, id string, req parcela.WebhookRequest) (*parcela.Webhook, error) {
	var w *parcela.Webhook
	err := db.inTx(ctx, func(tx *Tx) error {
		var err error
		if w, err = webhookByID(ctx, tx.q, db, a, id); err != nil {
			return err
		}
		if err := w.Apply(req, false); err != nil {
			return err
		}
		w.UpdatedAt = tx.Now
		_, err = tx.exec(ctx, `UPDATE webhooks SET name = ?, url = ?, events = ?, verb = ?, enabled = ?, disabled_reason = ?, failing_since = ?, updated_at = ? WHERE id = ?`,
			w.Name, w.URL, strings.Join(w.Events, ","), w.Verb, w.Enabled, w.DisabledReason, msPtr(w.FailingSince), ms64(w.UpdatedAt), w.ID)
		return err
	})
	return w, err
}

// DeleteWebhook removes a webhook; its delivery log is kept.
func (db *DB) DeleteWebhook(ctx context.Context, a parcela.Auth, id string) error {
	return db.inTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(ctx, `UPDATE webhooks SET deleted_at = ?, enabled = ?, updated_at = ? WHERE id = ? AND company_id = ? AND environment = ? AND deleted_at IS NULL`,
			ms64(tx.Now), false, ms64(tx.Now), id, a.CompanyID, string(a.Environment))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return parcela.NotFound("webhook")
		}
		return nil
	})
}

// SecretOverlap is how long the old secret keeps signing after a rotation.
const SecretOverlap = 24 * time.Hour

// RotateWebhookSecret issues a new secret; the old one signs alongside it for 24 h.
func (db *DB) RotateWebhookSecret(ctx context.Context, a parcela.Auth, id string) (*parcela.Webhook, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	var w *parcela.Webhook
	err = db.inTx(ctx, func(tx *Tx) error {
		var err error
		if w, err = webhookByID(ctx, tx.q, db, a, id); err != nil {
			return err
		}
		until := tx.Now.Add(SecretOverlap)
		old := w.Secret
		w.Secret, w.PreviousSecret, w.PreviousSecretUntil, w.UpdatedAt = secret, &old, &until, tx.Now
		_, err = tx.exec(ctx, `UPDATE webhooks SET secret = ?, previous_secret = ?, previous_secret_until = ?, updated_at = ? WHERE id = ?`,
			w.Secret, old, ms64(until), ms64(tx.Now), w.ID)
		return err
	})
	return w, err
}

// DeliveryArgs is the River job that delivers one delivery. Generation
// must match the delivery's, so a superseded job stands down.
type DeliveryArgs struct {
	DeliveryID string `json:"delivery_id"`
	Generation int    `json:"generation"`
}

// Kind names the job in River's table.
func (DeliveryArgs) Kind() string { return "deliver_webhook" }

// DeliveryQueue is the River queue of webhook deliveries: its own, so slow
// receivers never hold up the sweeps, and wide, because deliveries mostly wait
// on the network.
const DeliveryQueue = "webhooks"

// DeliveryQueueName is the queue this store sends deliveries to: DeliveryQueue
// unless DB.DeliveryQueue names another (tests sharing one PostgreSQL
// database each work their own).
func (db *DB) DeliveryQueueName() string {
	if db.DeliveryQueue != "" {
		return db.DeliveryQueue
	}
	return DeliveryQueue
}

// enqueueDelivery queues a delivery's job on the delivery queue, to run at
// at (nil: now).
func (tx *Tx) enqueueDelivery(args DeliveryArgs, at *time.Time) {
	opts := &river.InsertOpts{Queue: tx.db.DeliveryQueueName()}
	if at != nil {
		opts.ScheduledAt = *at
	}
	tx.Enqueue(args, opts)
}

// fanOut creates a delivery, and its job, for every enabled webhook of each
// event's company, environment and entity that subscribes to the event; the
// deliveries of all the events in one INSERT.
func fanOut(ctx context.Context, tx *Tx, events []Event) error {
	var ids []string
	var args []any
	for i := range events {
		e := &events[i]
		hooks, err := tx.subscriptions(ctx, e)
		if err != nil {
			return err
		}
		for _, h := range hooks {
			if !slices.Contains(h.events, e.Event) {
				continue
			}
			id := newID()
			ids = append(ids, id)
			args = append(args, id, e.CompanyID, string(e.Environment), h.id, e.ID, e.CreatedAt, e.CreatedAt)
		}
	}
	if err := tx.insertMany(ctx, `INSERT INTO webhook_deliveries (id, company_id, environment, webhook_id, event_id, status, created_at, updated_at)`,
		`(?, ?, ?, ?, ?, 'pending', ?, ?)`, 7, args); err != nil {
		return err
	}
	for _, id := range ids {
		tx.enqueueDelivery(DeliveryArgs{DeliveryID: id}, nil)
	}
	return nil
}

// subscriptions returns the webhooks of e's company, environment and
// entity, looked up once per transaction.
func (tx *Tx) subscriptions(ctx context.Context, e *Event) ([]subscription, error) {
	key := e.CompanyID + "|" + string(e.Environment) + "|" + e.Entity
	if hooks, ok := tx.hooks[key]; ok {
		return hooks, nil
	}
	rows, err := tx.query(ctx, `SELECT id, events FROM webhooks WHERE company_id = ? AND environment = ? AND entity = ? AND enabled = ? AND deleted_at IS NULL`,
		e.CompanyID, string(e.Environment), e.Entity, true)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hooks []subscription
	for rows.Next() {
		var h subscription
		var events string
		if err := rows.Scan(&h.id, &events); err != nil {
			return nil, err
		}
		h.events = splitList(events)
		hooks = append(hooks, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if tx.hooks == nil {
		tx.hooks = map[string][]subscription{}
	}
	tx.hooks[key] = hooks
	return hooks, nil
}

// subscription is a webhook as fan-out needs it.
type subscription struct {
	id     string
	events []string
}
