package parcela

import (
	"context"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"

	"parcela/webhook"
)

// MaxWebhooks is how many webhooks a company may have in each environment:
// each event fans out to every subscribed one, so the bound keeps one
// company's deliveries from multiplying without end.
const MaxWebhooks = 25

// SecretOverlap is how long the old secret keeps signing after a rotation.
const SecretOverlap = 24 * time.Hour

// Webhooks manages a company's webhooks and replays their deliveries.
type Webhooks struct {
	store     WebhookStore
	clock     Clock
	addresses *webhook.AddressPolicy // nil: none refused at the door
}

// NewWebhooks returns the webhook use cases.
func NewWebhooks(store WebhookStore, clock Clock) *Webhooks {
	return &Webhooks{store: store, clock: clock}
}

var _ WebhookService = (*Webhooks)(nil)

// RefuseAddresses has a webhook's URL refused when its host is an address
// (or localhost) that policy keeps deliveries from: every delivery to it
// would be blocked, and the company learned it only from the delivery log.
// A name is looked up only when a delivery connects (DNS may change), where
// the policy checks again. Set it before serving.
func (s *Webhooks) RefuseAddresses(policy *webhook.AddressPolicy) { s.addresses = policy }

// apply applies req to w (Webhook.Apply) and checks its URL's address
// (checkAddress), answering every field at fault at once: a webhook with
// no name and a private address was refused for its name alone, and its
// address only once the name was fixed (an audit).
func (s *Webhooks) apply(w *Webhook, req WebhookRequest, creating bool) error {
	var v Validation
	w.apply(&v, req, creating)
	if req.URL != nil && !v.Has("url") {
		s.checkAddress(&v, w)
	}
	return v.Err()
}

// checkAddress refuses, in v, w's URL whose host is an address s.addresses
// refuses.
func (s *Webhooks) checkAddress(v *Validation, w *Webhook) {
	if s.addresses == nil {
		return
	}
	u, err := url.Parse(w.URL)
	if err != nil {
		return // Apply refused it
	}
	// The client dials the host as IDNA's lookup profile maps it, the
	// one net/http applies before dialling (full-width and circled digits
	// to digits, ideographic full stops to dots, and the characters
	// UTS #46 ignores, a soft hyphen or a zero-width space, removed):
	// judge that host. Judged as NFKC alone, "127.0.0.\u00ad1" passed here
	// and was dialled as 127.0.0.1, refused at every delivery. A host the
	// profile refuses is not dialled at all; NFKC then judges what it can.
	host, err := idna.Lookup.ToASCII(u.Hostname())
	if err != nil {
		host = strings.ReplaceAll(norm.NFKC.String(u.Hostname()), "\u3002", ".")
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	// With its port, so that one of parcela's own listeners is refused
	// here, as every delivery to it would be (an audit).
	port := uint16(80)
	if u.Scheme == "https" {
		port = 443
	}
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		port = uint16(p)
	}
	check := func(a netip.Addr) error { return s.addresses.CheckDial(netip.AddrPortFrom(a, port)) }
	var refused error
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		// Always loopback (RFC 6761), of either family.
		if check(netip.MustParseAddr("127.0.0.1")) != nil {
			refused = check(netip.IPv6Loopback())
		}
	} else if addr, err := netip.ParseAddr(host); err == nil {
		refused = check(addr)
	} else if addr, ok := looseIPv4(host); ok {
		refused = check(addr)
	}
	if refused != nil {
		v.Add("url", "invalid", "must reach a public address: "+refused.Error())
	}
}

// looseIPv4 reads host as the IPv4 address URL parsers and inet_aton
// make of it: one to four parts, each decimal, octal (a leading 0) or hex
// (0x), the last filling the bytes the others left (2130706433, 0177.0.0.1,
// 127.1 are all 127.0.0.1). A resolver that hands such a host to
// inet_aton dials that address; no public name is written so (a top-level
// domain is never a number).
func looseIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
			if p == "" {
				p = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	last := len(vals) - 1
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n := vals[last]
	for i, v := range vals[:last] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// CreateWebhook validates and stores a webhook with a new signing secret.
func (s *Webhooks) CreateWebhook(ctx context.Context, a Auth, req WebhookRequest) (*Webhook, error) {
	w := &Webhook{CompanyID: a.CompanyID, Environment: a.Environment, Enabled: true}
	if err := s.apply(w, req, true); err != nil {
		return nil, err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	w.ID, w.Secret, w.CreatedAt, w.UpdatedAt = NewID(), secret, now, now
	err = s.store.CreateWebhook(answering(ctx, w), w, MaxWebhooks)
	if IsConflict(err) {
		return nil, Errorf(EINVALID, "a company has at most %d webhooks in each environment; delete one before creating another", MaxWebhooks)
	} else if err != nil {
		return nil, err
	}
	return w, nil
}

// Webhooks lists the caller's webhooks, oldest first.
func (s *Webhooks) Webhooks(ctx context.Context, a Auth) ([]*Webhook, error) {
	return s.store.Webhooks(ctx, a)
}

// Webhook returns one of the caller's webhooks.
func (s *Webhooks) Webhook(ctx context.Context, a Auth, id string) (*Webhook, error) {
	return s.store.Webhook(ctx, a, id)
}

// UpdateWebhook patches a webhook; enabling it clears its failure record.
// Its settings are written, its state only when the request changes it
// (patchesState), its secrets never, and it is answered as stored: the delivery worker (a
// 410, five days of failures, a success) and a rotation may have changed it
// since it was read, and writing back what was read would undo them. The
// settings are all written, so they are guarded by the ones read: a PATCH
// decided before another changed them is decided again, or it would put
// back the other's URL or events.
func (s *Webhooks) UpdateWebhook(ctx context.Context, a Auth, id string, req WebhookRequest) (*Webhook, error) {
	err := decideAndApply("webhook", func() error {
		w, err := s.store.Webhook(ctx, a, id)
		if err != nil {
			return err
		}
		state, were := w.patchesState(req), w.Settings()
		if err := s.apply(w, req, false); err != nil {
			return err
		}
		w.UpdatedAt = s.clock.Now()
		return s.store.UpdateWebhook(ctx, w, were, state)
	})
	if err != nil {
		return nil, err
	}
	return s.store.Webhook(ctx, a, id)
}

// DeleteWebhook removes a webhook; its delivery log is kept.
func (s *Webhooks) DeleteWebhook(ctx context.Context, a Auth, id string) error {
	return s.store.DeleteWebhook(ctx, a, id, s.clock.Now())
}

// RotateWebhookSecret issues a new secret; the old one signs alongside it
// for SecretOverlap. The rotation is guarded by the secret it replaces, so
// of two at once the later rotates the earlier's secret: each secret
// answered still signs. It is answered as stored (the store reads it back
// in the rotation's transaction): a rename since the read stands.
func (s *Webhooks) RotateWebhookSecret(ctx context.Context, a Auth, id string) (*Webhook, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	var rotated *Webhook
	err = decideAndApply("webhook", func() error {
		w, err := s.store.Webhook(ctx, a, id)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		until, old := now.Add(SecretOverlap), w.Secret
		w.Secret, w.PreviousSecret, w.PreviousSecretUntil, w.UpdatedAt = secret, &old, &until, now
		rotated = w
		return s.store.RotateWebhookSecret(answering(ctx, w), w, old)
	})
	if err != nil {
		return nil, err
	}
	return rotated, nil
}

// Deliveries lists the caller's deliveries, newest first, optionally of one
// of its webhooks, a deleted one too: its log is kept, and listed under its
// id in the whole log. A page holds up to MaxPerPageOfLargeItems.
func (s *Webhooks) Deliveries(ctx context.Context, a Auth, webhookID string, p Page) ([]*Delivery, int, error) {
	if err := p.ValidateUpTo(MaxPerPageOfLargeItems); err != nil {
		return nil, 0, err
	}
	if webhookID != "" && !IsUUID(webhookID) {
		return nil, 0, NotFound("webhook")
	}
	return s.store.Deliveries(ctx, a, LowerUUID(webhookID), p)
}

// Delivery reads one of the caller's deliveries with every attempt its
// log keeps (a listing shows each delivery's latest ListedAttempts).
func (s *Webhooks) Delivery(ctx context.Context, a Auth, id string) (*Delivery, error) {
	return s.store.Delivery(ctx, a, id)
}

// RetryDelivery sends a delivery again now (a replay), whatever its status,
// as long as its webhook is enabled.
func (s *Webhooks) RetryDelivery(ctx context.Context, a Auth, id string) (*Delivery, error) {
	var retried *Delivery
	err := decideAndApply("delivery", func() error {
		d, err := s.store.Delivery(ctx, a, id)
		if err != nil {
			return err
		}
		w, err := s.store.Webhook(ctx, a, d.WebhookID)
		if ErrorCode(err) == ENOTFOUND {
			return Errorf(EINVALIDSTATE, "the webhook of this delivery was deleted")
		} else if err != nil {
			return err
		}
		if !w.Enabled {
			return Errorf(EINVALIDSTATE, "the webhook is disabled; enable it with PATCH /webhooks/%s first", w.ID)
		}
		// The delivery as the store leaves it: pending again, as its next
		// generation, with no retry scheduled and its schedule from the start.
		now := s.clock.Now()
		queued := *d
		queued.Status, queued.Generation, queued.AttemptCount, queued.NextAttemptAt, queued.UpdatedAt = DeliveryPending, d.Generation+1, 0, nil, now
		if n := len(queued.Attempts); n > KeptAttempts {
			queued.Attempts = queued.Attempts[n-KeptAttempts:] // as the store keeps them
		}
		queued.AttemptsTotal = len(queued.Attempts)
		retried = &queued
		return s.store.RetryDelivery(answering(ctx, retried), d, now)
	})
	if err != nil {
		return nil, err
	}
	return retried, nil
}
