package parcela

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WebhookEvents lists the events each entity emits.
var WebhookEvents = map[string][]string{
	"order":   {"in_progress", "finished", "canceled"},
	"billing": {"waiting_payment", "active", "finished", "canceled"},
	"bill":    {"pending", "paid", "overdue", "canceled"},
}

// Webhook subscribes an address to events of one entity.
type Webhook struct {
	ID                  string
	CompanyID           string
	Environment         Environment
	Name                string
	URL                 string
	Entity              string
	Events              []string
	Verb                string // post, put or patch
	Secret              string
	PreviousSecret      *string
	PreviousSecretUntil *time.Time
	Enabled             bool
	DisabledReason      *string
	FailingSince        *time.Time
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// WebhookSettings are what a PATCH may change of a webhook besides its
// state.
type WebhookSettings struct {
	Name   string
	URL    string
	Events []string
	Verb   string
}

// Settings is w's name, URL, events and verb.
func (w *Webhook) Settings() WebhookSettings {
	return WebhookSettings{Name: w.Name, URL: w.URL, Events: w.Events, Verb: w.Verb}
}

// Secrets returns the secrets that sign a delivery at now: the current one,
// and the previous one during the 24 hours after a rotation.
func (w *Webhook) Secrets(now time.Time) []string {
	s := []string{w.Secret}
	if w.PreviousSecret != nil && w.PreviousSecretUntil != nil && now.Before(*w.PreviousSecretUntil) {
		s = append(s, *w.PreviousSecret)
	}
	return s
}

// WebhookRequest is a create or patch body; nil fields are not set.
type WebhookRequest struct {
	Name    *string   `json:"name"`
	URL     *string   `json:"url"`
	Entity  *string   `json:"entity"`
	Events  *[]string `json:"events"`
	Verb    *string   `json:"verb"`
	Enabled *bool     `json:"enabled"`
}

// Apply sets the request's fields on w and validates the result. Production
// webhooks must use https; the sandbox also takes http.
func (w *Webhook) Apply(req WebhookRequest, creating bool) error {
	var v Validation
	w.apply(&v, req, creating)
	return v.Err()
}

// apply is Apply adding its errors to v, beside those the caller finds.
func (w *Webhook) apply(v *Validation, req WebhookRequest, creating bool) {
	if creating {
		// A slice, not a map: the errors (and the message naming the first)
		// come in the body's order on every call.
		for _, f := range []struct {
			field   string
			missing bool
		}{{"name", req.Name == nil}, {"url", req.URL == nil}, {"entity", req.Entity == nil}, {"events", req.Events == nil}, {"verb", req.Verb == nil}} {
			if f.missing {
				v.Add(f.field, "required", "is required")
			}
		}
		if req.Enabled != nil {
			v.Add("enabled", "not_allowed", "is set with PATCH; a new webhook is enabled")
		}
	} else if req.Entity != nil && *req.Entity != w.Entity {
		v.Add("entity", "not_allowed", "cannot be changed; create another webhook")
	}
	if req.Name != nil {
		switch w.Name = TrimText(*req.Name); {
		case w.Name == "":
			v.Add("name", "required", "must not be empty")
		case TooLong(w.Name, 255):
			v.Add("name", "too_long", "must be at most 255 characters")
		default:
			checkText(v, "name", w.Name, SingleLine)
		}
	}
	if req.URL != nil {
		was := w.URL
		w.URL = strings.TrimSpace(*req.URL)
		if w.URL != was {
			// The failures were the old address's: judged by them, the new
			// one was disabled at its first failed attempt, as if it had
			// failed for five days.
			w.FailingSince = nil
		}
		u, err := url.Parse(w.URL)
		switch {
		case !ValidText(w.URL, SingleLine):
			v.Add("url", "invalid", "must not contain control characters")
		case err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil:
			v.Add("url", "invalid", "must be an absolute http(s) URL without credentials")
		case !validPort(u.Port()):
			// No connection can reach it: every delivery would fail.
			v.Add("url", "invalid", "must have a port from 1 to 65535, if it has one")
		case w.Environment == Production && u.Scheme != "https":
			v.Add("url", "invalid", "must use https in production")
		case TooLong(w.URL, 2048):
			v.Add("url", "too_long", "must be at most 2048 characters")
		}
	}
	if req.Entity != nil && creating {
		w.Entity = *req.Entity
		if _, ok := WebhookEvents[w.Entity]; !ok {
			v.Add("entity", "invalid", "must be order, billing or bill")
		}
	}
	if req.Events != nil {
		w.Events = *req.Events
		allowed, known := WebhookEvents[w.Entity]
		switch {
		case len(w.Events) == 0:
			v.Add("events", "too_small", "must name at least one event")
		case known:
			for _, e := range w.Events {
				if !slices.Contains(allowed, e) {
					v.Add("events", "invalid", fmt.Sprintf("%q is not an event of %s; use %s", truncateText(e, 32), w.Entity, strings.Join(allowed, ", ")))
				}
			}
			slices.Sort(w.Events)
			w.Events = slices.Compact(w.Events)
		}
	}
	if req.Verb != nil {
		if w.Verb = strings.ToLower(*req.Verb); w.Verb != "post" && w.Verb != "put" && w.Verb != "patch" {
			v.Add("verb", "invalid", "must be post, put or patch")
		}
	}
	if !creating && w.patchesState(req) {
		w.Enabled = *req.Enabled
		if w.Enabled {
			w.DisabledReason, w.FailingSince = nil, nil
		} else {
			reason := "disabled by the company"
			w.DisabledReason = &reason
		}
	}
}

// validPort reports whether a URL's port (digits, as url.Parse leaves
// them) is absent or one a connection can use.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// patchesState tells whether req changes w's state (enabled, why not,
// failing since). enabled: true sent to an enabled webhook (a client
// sending every field back) does not: it must not restart the five days
// of failures after which the webhook is disabled.
func (w *Webhook) patchesState(req WebhookRequest) bool {
	return req.Enabled != nil && !(*req.Enabled && w.Enabled)
}

// WebhookForm is spec 2.9 with the enabled extension.
type WebhookForm struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	URL            string    `json:"url"`
	Entity         string    `json:"entity"`
	Events         []string  `json:"events"`
	Verb           string    `json:"verb"`
	CreatedAt      Timestamp `json:"created_at"`
	UpdatedAt      Timestamp `json:"updated_at"`
	Enabled        bool      `json:"enabled"`
	DisabledReason *string   `json:"disabled_reason"`
}

// NewWebhookForm renders a webhook without its secret.
func NewWebhookForm(w *Webhook) WebhookForm {
	return WebhookForm{ID: w.ID, Name: w.Name, URL: w.URL, Entity: w.Entity, Events: nonNil(w.Events), Verb: w.Verb,
		CreatedAt: ts(w.CreatedAt), UpdatedAt: ts(w.UpdatedAt), Enabled: w.Enabled, DisabledReason: w.DisabledReason}
}

// WebhookSecretForm is the webhook with its signing secret, shown on
// creation and rotation only.
type WebhookSecretForm struct {
	WebhookForm
	Secret string `json:"secret"`
}

// Delivery is one event on its way to one webhook.
type Delivery struct {
	ID            string
	CompanyID     string
	Environment   Environment
	WebhookID     string
	EventID       string
	Entity        string
	Event         string
	Status        string // pending, retrying, delivered, failed
	AttemptCount  int
	Generation    int // bumped by every manual retry; a superseded job stands down
	NextAttemptAt *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// Attempts are the kept attempts, oldest first; a listing's, only the
	// latest ListedAttempts of the AttemptsTotal kept.
	Attempts      []DeliveryAttempt
	AttemptsTotal int
}

// DeliveryAttempt is one HTTP request of a delivery.
type DeliveryAttempt struct {
	AttemptedAt    time.Time
	ResponseStatus *int
	DurationMS     int64
	Error          *string
	ResponseBody   *string
}

// DeliveryForm renders a delivery with its attempts.
type DeliveryForm struct {
	ID            string                `json:"id"`
	WebhookID     string                `json:"webhook_id"`
	EventID       string                `json:"event_id"`
	Entity        string                `json:"entity"`
	Event         string                `json:"event"`
	Status        string                `json:"status"`
	Attempts      []DeliveryAttemptForm `json:"attempts"`
	AttemptsTotal int                   `json:"attempts_total"`
	NextAttemptAt *Timestamp            `json:"next_attempt_at"`
	CreatedAt     Timestamp             `json:"created_at"`
	UpdatedAt     Timestamp             `json:"updated_at"`
}

// DeliveryAttemptForm renders one attempt.
type DeliveryAttemptForm struct {
	AttemptedAt    Timestamp `json:"attempted_at"`
	ResponseStatus *int      `json:"response_status"`
	DurationMS     int64     `json:"duration_ms"`
	Error          *string   `json:"error"`
	ResponseBody   *string   `json:"response_body"`
}

// NewDeliveryForm renders a delivery.
func NewDeliveryForm(d *Delivery) DeliveryForm {
	f := DeliveryForm{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, Entity: d.Entity, Event: d.Event, Status: d.Status,
		Attempts: make([]DeliveryAttemptForm, 0, len(d.Attempts)), AttemptsTotal: max(d.AttemptsTotal, len(d.Attempts)),
		NextAttemptAt: tsPtr(d.NextAttemptAt), CreatedAt: ts(d.CreatedAt), UpdatedAt: ts(d.UpdatedAt)}
	for _, a := range d.Attempts {
		f.Attempts = append(f.Attempts, DeliveryAttemptForm{AttemptedAt: ts(a.AttemptedAt), ResponseStatus: a.ResponseStatus, DurationMS: a.DurationMS,
			Error: a.Error, ResponseBody: a.ResponseBody})
	}
	return f
}
