package sqldb

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"parcela"
)

// fanOut creates a delivery, and its job, for every enabled webhook of each
// event's company, environment and entity that subscribes to the event; the
// deliveries of all the events in one INSERT.
func fanOut(ctx context.Context, tx *Tx, events []parcela.Event) error {
	var ids []string
	var envs []parcela.Environment
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
			id := parcela.NewID()
			ids = append(ids, id)
			args = append(args, id, e.CompanyID, string(e.Environment), h.id, e.ID, ms64(e.CreatedAt), ms64(e.CreatedAt))
			envs = append(envs, e.Environment)
		}
	}
	if err := tx.insertMany(ctx, `INSERT INTO webhook_deliveries (id, company_id, environment, webhook_id, event_id, status, created_at, updated_at)`,
		`(?, ?, ?, ?, ?, 'pending', ?, ?)`, 7, args); err != nil {
		return err
	}
	for i, id := range ids {
		tx.enqueueDelivery(DeliveryJob{DeliveryID: id, Environment: envs[i], Attempt: 1})
	}
	return nil
}

// subscription is a webhook as fan-out needs it.
type subscription struct {
	id     string
	events []string
}

func scanSubscription(row rowScanner) (subscription, error) {
	var s subscription
	var events string
	err := row.Scan(&s.id, &events)
	s.events = splitList(events)
	return s, err
}

// subscriptions returns the webhooks of e's company, environment and
// entity, looked up once per transaction.
func (tx *Tx) subscriptions(ctx context.Context, e *parcela.Event) ([]subscription, error) {
	key := e.CompanyID + "|" + string(e.Environment) + "|" + e.Entity
	if hooks, ok := tx.hooks[key]; ok {
		return hooks, nil
	}
	hooks, err := collect(ctx, tx.r, scanSubscription, `SELECT id, events FROM webhooks
		WHERE company_id = ? AND environment = ? AND entity = ? AND enabled = ? AND deleted_at IS NULL`,
		e.CompanyID, string(e.Environment), e.Entity, true)
	if err != nil {
		return nil, err
	}
	if tx.hooks == nil {
		tx.hooks = map[string][]subscription{}
	}
	tx.hooks[key] = hooks
	return hooks, nil
}

// deliveryWorkSelect reads deliveries with their events and webhooks in one
// statement: the worker runs it once per job.
var deliveryWorkSelect = `SELECT d.id, d.company_id, d.environment, d.webhook_id, d.event_id, d.status, d.attempt_count, d.generation,
	d.next_attempt_at, d.created_at, d.updated_at, e.id, e.company_id, e.environment, e.entity, e.entity_id, e.event, e.data, e.created_at,
	` + prefixed("w.", webhookColumns) + `, w.deleted_at
	FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id`

func scanDeliveryWork(row rowScanner) (*parcela.DeliveryWork, error) {
	var w parcela.DeliveryWork
	d, e := &w.Delivery, &w.Event
	var env, eenv, data string
	var next, deleted sql.NullInt64
	var created, updated, eventAt int64
	hook, err := scanWebhook(joined{row, []any{&d.ID, &d.CompanyID, &env, &d.WebhookID, &d.EventID, &d.Status, &d.AttemptCount, &d.Generation,
		&next, &created, &updated, &e.ID, &e.CompanyID, &eenv, &e.Entity, &e.EntityID, &e.Event, &data, &eventAt}, []any{&deleted}})
	if err != nil {
		return nil, err
	}
	w.Webhook, w.Deleted = hook, deleted.Valid
	d.Environment, e.Environment, e.Data, e.CreatedAt = parcela.Environment(env), parcela.Environment(eenv), []byte(data), fromMS(eventAt)
	d.Entity, d.Event = e.Entity, e.Event
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = fromNullMS(next), fromMS(created), fromMS(updated)
	return &w, nil
}

// DeliveryWork reads a delivery with its webhook and event, for the worker.
func (db *DB) DeliveryWork(ctx context.Context, id string) (*parcela.DeliveryWork, error) {
	w, err := scanDeliveryWork(db.reader.queryRow(ctx, deliveryWorkSelect+` WHERE d.id = ?`, id))
	if err != nil {
		return nil, failed("read delivery", notFound(err, "delivery"))
	}
	return w, nil
}

// DeliveryWorks reads deliveries with their webhooks and events, in no
// particular order; an id not found is left out.
func (db *DB) DeliveryWorks(ctx context.Context, ids []string) ([]*parcela.DeliveryWork, error) {
	var out []*parcela.DeliveryWork
	for len(ids) > 0 {
		n := min(len(ids), maxParams)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		works, err := collect(ctx, db.reader, scanDeliveryWork, deliveryWorkSelect+` WHERE d.id IN (`+placeholders(n)+`)`, args...)
		if err != nil {
			return nil, failed("read deliveries", err)
		}
		out = append(out, works...)
		ids = ids[n:]
	}
	return out, nil
}

// attemptWrites is what the attempts of one transaction share: their rows,
// inserted together at the end, and which webhooks an attempt already
// cleared or marked failing, so the next attempts of that webhook in the
// transaction need not again.
type attemptWrites struct {
	rows []any
	// marked holds, by webhook and the URL its attempts went to, whether
	// the last attempt that changed it in this transaction delivered
	// (true) or failed (false).
	marked map[string]bool
}

// add appends r's attempt row.
func (w *attemptWrites) add(r *parcela.AttemptRecord) {
	a := r.Attempt
	w.rows = append(w.rows, parcela.NewID(), r.DeliveryID, ms64(a.AttemptedAt), a.ResponseStatus, a.DurationMS, a.Error, a.ResponseBody)
}

// recordAttempt adds to w an attempt whose delivery moved on
// (moveDeliveries), which left the delivery with attempts attempts, and
// moves its webhook on in tx.
func recordAttempt(ctx context.Context, tx *Tx, r *parcela.AttemptRecord, attempts int, w *attemptWrites) error {
	w.add(r)
	if r.RetryAt != nil {
		tx.enqueueDelivery(DeliveryJob{DeliveryID: r.DeliveryID, Environment: r.Environment, Generation: r.Generation, Attempt: attempts + 1, At: r.RetryAt})
	}
	h := r.Webhook
	if h.Skip {
		return nil
	}
	// Each statement bears on the webhook only while it has the URL the
	// attempt was sent to (url = ?): a PATCH that moved it elsewhere while
	// the attempt was under way answered it enabled at its new address,
	// and the old address's 410 disabled it there after that answer.
	key := r.WebhookID + "\x00" + h.URL
	delivered, seen := w.marked[key]
	if w.marked == nil {
		w.marked = map[string]bool{}
	}
	w.marked[key] = h.Delivered
	if h.Delivered {
		if seen && delivered {
			return nil
		}
		_, err := tx.r.exec(ctx, `UPDATE webhooks SET failing_since = NULL WHERE id = ? AND url = ? AND failing_since IS NOT NULL`, r.WebhookID, h.URL)
		return err
	}
	if h.Disable != "" {
		_, err := tx.r.exec(ctx, `UPDATE webhooks SET enabled = ?, disabled_reason = ?, updated_at = ? WHERE id = ? AND url = ? AND enabled = ?`,
			false, h.Disable, ms64(r.At), r.WebhookID, h.URL, true)
		if err != nil {
			return err
		}
	}
	if seen && !delivered {
		return nil // an attempt before this one in the transaction marked it failing
	}
	if _, err := tx.r.exec(ctx, `UPDATE webhooks SET failing_since = COALESCE(failing_since, ?) WHERE id = ? AND url = ?`,
		ms64(r.At), r.WebhookID, h.URL); err != nil {
		return err
	}
	if h.Disable != "" {
		return nil
	}
	_, err := tx.r.exec(ctx, `UPDATE webhooks SET enabled = ?, disabled_reason = ?, updated_at = ? WHERE id = ? AND url = ? AND enabled = ? AND failing_since <= ?`,
		false, h.DisableReason, ms64(r.At), r.WebhookID, h.URL, true, ms64(h.FailingSince))
	return err
}

const deliverySelect = `SELECT d.id, d.company_id, d.environment, d.webhook_id, d.event_id, e.entity, e.event, d.status, d.attempt_count,
	d.generation, d.next_attempt_at, d.created_at, d.updated_at FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`

func scanDelivery(row rowScanner) (*parcela.Delivery, error) {
	var d parcela.Delivery
	var env string
	var next sql.NullInt64
	var created, updated int64
	if err := row.Scan(&d.ID, &d.CompanyID, &env, &d.WebhookID, &d.EventID, &d.Entity, &d.Event, &d.Status, &d.AttemptCount, &d.Generation,
		&next, &created, &updated); err != nil {
		return nil, err
	}
	d.Environment, d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = parcela.Environment(env), fromNullMS(next), fromMS(created), fromMS(updated)
	d.Attempts = []parcela.DeliveryAttempt{}
	return &d, nil
}

type deliveryAttempt struct {
	deliveryID string
	attempt    parcela.DeliveryAttempt
	total      int // the delivery's kept attempts, when the query counts them
}

func scanAttempt(row rowScanner) (deliveryAttempt, error) {
	var a deliveryAttempt
	var at int64
	var status sql.NullInt64
	var errText, body sql.NullString
	err := row.Scan(&a.deliveryID, &at, &status, &a.attempt.DurationMS, &errText, &body, &a.total)
	a.attempt.AttemptedAt, a.attempt.ResponseStatus, a.attempt.Error, a.attempt.ResponseBody = fromMS(at), nullInt(status), nullString(errText), nullString(body)
	return a, err
}

func (db *DB) attachAttempts(ctx context.Context, ds []*parcela.Delivery) error {
	return attachAttempts(ctx, db.reader, ds, 0)
}

// attachAttempts reads ds's attempts through r, oldest first: every kept
// one, or with latest > 0 each delivery's latest that many (a listing's:
// a page of a thousand deliveries with a hundred kept attempts each, of
// up to 6 KiB, took 2.4 GB to answer). AttemptsTotal counts them all.
func attachAttempts(ctx context.Context, r runner, ds []*parcela.Delivery, latest int) error {
	if len(ds) == 0 {
		return nil
	}
	byID := make(map[string]*parcela.Delivery, len(ds))
	args := make([]any, 0, len(ds)+1)
	for _, d := range ds {
		byID[d.ID] = d
		args = append(args, d.ID)
	}
	in := placeholders(len(args))
	query := `SELECT delivery_id, attempted_at, response_status, duration_ms, error, response_body, 0
		FROM webhook_attempts WHERE delivery_id IN (` + in + `) ORDER BY attempted_at, id`
	if latest > 0 {
		// Numbered on the ids alone, so only the rows kept are read whole.
		query = `SELECT w.delivery_id, w.attempted_at, w.response_status, w.duration_ms, w.error, w.response_body, k.total
			FROM webhook_attempts w JOIN (SELECT id,
				ROW_NUMBER() OVER (PARTITION BY delivery_id ORDER BY attempted_at DESC, id DESC) AS n,
				COUNT(*) OVER (PARTITION BY delivery_id) AS total
				FROM webhook_attempts WHERE delivery_id IN (` + in + `)) k ON k.id = w.id
			WHERE k.n <= ? ORDER BY w.attempted_at, w.id`
		args = append(args, latest)
	}
	attempts, err := collect(ctx, r, scanAttempt, query, args...)
	for _, a := range attempts {
		if d := byID[a.deliveryID]; d != nil {
			d.Attempts = append(d.Attempts, a.attempt)
			d.AttemptsTotal = max(a.total, len(d.Attempts))
		}
	}
	return err
}

// Deliveries lists the caller's deliveries, newest first, optionally of one
// of its webhooks, deleted ones included (their log is kept); a webhook id
// that was never the caller's is not found.
//
// Its count reads the company's whole delivery log (or its webhook's),
// which every event lengthens, whatever the page: the count, the page and
// its attempts are read in one session that takes the company's turn at
// the gate (byTurns). Counted before the gate (ungated on PostgreSQL), a
// company with a long log sending listings at once held a pool connection
// with each count, and every company's reads waited for one.
func (db *DB) Deliveries(ctx context.Context, a parcela.Auth, webhookID string, p parcela.Page) ([]*parcela.Delivery, int, error) {
	r, done, err := db.reader.byTurns(a).session(ctx)
	if err != nil {
		return nil, 0, failed("list deliveries", err)
	}
	defer done()
	cond, args := `d.company_id = ? AND d.environment = ?`, []any{a.CompanyID, string(a.Environment)}
	var total int
	if webhookID == "" {
		if err := r.queryRow(ctx, `SELECT COUNT(*) FROM webhook_deliveries d WHERE `+cond, args...).Scan(&total); err != nil {
			return nil, 0, failed("count deliveries", err)
		}
	} else {
		cond += ` AND d.webhook_id = ?`
		args = append(args, webhookID)
		var known bool
		err := r.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks WHERE id = ? AND company_id = ? AND environment = ?),
			(SELECT COUNT(*) FROM webhook_deliveries d WHERE `+cond+`)`, append([]any{webhookID, a.CompanyID, string(a.Environment)}, args...)...).Scan(&known, &total)
		if err == nil && !known {
			err = parcela.NotFound("webhook")
		}
		if err != nil {
			return nil, 0, failed("count deliveries", err)
		}
	}
	out, err := collect(ctx, r, scanDelivery, deliverySelect+` WHERE `+cond+` ORDER BY d.created_at DESC, d.id DESC LIMIT ? OFFSET ?`,
		append(args, p.PerPage, (p.Page-1)*p.PerPage)...)
	if err == nil {
		err = attachAttempts(ctx, r, out, parcela.ListedAttempts)
	}
	return out, atLeastShown(total, p, len(out)), failed("list deliveries", err)
}

// Delivery returns one of the caller's deliveries with its attempts.
func (db *DB) Delivery(ctx context.Context, a parcela.Auth, id string) (*parcela.Delivery, error) {
	d, err := scanDelivery(db.reader.queryRow(ctx, deliverySelect+` WHERE d.id = ? AND d.company_id = ? AND d.environment = ?`, id, a.CompanyID, string(a.Environment)))
	if err != nil {
		return nil, failed("read delivery", notFound(err, "delivery"))
	}
	return d, failed("read delivery attempts", db.attachAttempts(ctx, []*parcela.Delivery{d}))
}

// RetryDelivery queues a delivery again as its next generation, if it is
// still at the generation it was read at. The generation's attempts count
// from zero, so a replay that fails is retried on the whole schedule, even
// after the delivery had used up its attempts (attempt_count only paces
// the schedule). The log keeps the latest parcela.KeptAttempts attempts of
// the generations before. Its webhook must still be enabled and not
// deleted (a conflict otherwise: the retry reads it again and is refused):
// its row is share-locked after the delivery's, the order in which an
// attempt's record locks them, so a DELETE or a PATCH disabling it either
// waits for the retry or is seen by it. The use case checked only what it
// had read, and a retry committed after the DELETE had answered.
//
// It is guarded by the log read, too (its attempt count, which each
// attempt's record raises in the attempt's transaction, and the attempts
// the log holds): the retry is answered with the log it keeps, computed
// from the one read, and an attempt recorded since made it answer an
// attempt it deleted and miss the one it kept. On PostgreSQL the
// delivery's row is locked FOR UPDATE first: an attempt's record takes a
// key-share lock on it (its foreign key), which that waits for and which
// then waits for the retry, so no attempt commits between the guard's
// count and the trim (each statement of READ COMMITTED sees what
// committed before it: a superseded attempt, which moves no delivery,
// landed between them, a review found).
func (db *DB) RetryDelivery(ctx context.Context, d *parcela.Delivery, at time.Time) error {
	return failed("retry delivery", db.inTx(ctx, func(tx *Tx) error {
		if db.dialect == Postgres {
			var id string
			if err := tx.r.queryRow(ctx, `SELECT id FROM webhook_deliveries WHERE id = ? FOR UPDATE`, d.ID).Scan(&id); err != nil {
				return notFound(err, "delivery")
			}
		}
		if err := tx.r.guarded(ctx, "delivery", d.ID, `UPDATE webhook_deliveries SET status = ?, generation = ?, attempt_count = 0, next_attempt_at = NULL,
			updated_at = ? WHERE id = ? AND generation = ? AND attempt_count = ?
			AND (SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id = ?) = ?`, parcela.DeliveryPending, d.Generation+1, ms64(at), d.ID, d.Generation,
			d.AttemptCount, d.ID, max(d.AttemptsTotal, len(d.Attempts))); err != nil {
			return err
		}
		var live bool
		if err := tx.r.queryRow(ctx, `SELECT enabled AND deleted_at IS NULL FROM webhooks WHERE id = ?`+db.lockRows("SHARE"),
			d.WebhookID).Scan(&live); err != nil {
			return err
		}
		if !live {
			return &parcela.Conflict{Entity: "webhook", ID: d.WebhookID}
		}
		// Whatever the log read (d.Attempts): an attempt of the generation
		// before may have been recorded since, and the log the retry
		// trims is the one in its transaction. On a log within the bound
		// the statement reads its few attempts and deletes none.
		if _, err := tx.r.exec(ctx, `DELETE FROM webhook_attempts WHERE delivery_id = ? AND id NOT IN
			(SELECT id FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempted_at DESC, id DESC LIMIT ?)`,
			d.ID, d.ID, parcela.KeptAttempts); err != nil {
			return err
		}
		tx.enqueueDelivery(DeliveryJob{DeliveryID: d.ID, Environment: d.Environment, Generation: d.Generation + 1, Attempt: 1})
		return nil
	}))
}

// PendingDeliveries counts deliveries waiting to be sent, for the queue-depth gauge.
func (db *DB) PendingDeliveries(ctx context.Context) (int, error) {
	var n int
	err := db.reader.queryRow(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying')`).Scan(&n)
	return n, failed("count pending deliveries", err)
}
