package client

import (
	"net/http"
	"time"

	"parcela/webhook"
)

// WebhookTolerance is how far a notification's webhook-timestamp may be
// from the receiver's clock, either way, before VerifyWebhook refuses it
// as a possible replay.
const WebhookTolerance = webhook.DefaultTolerance

// The errors of VerifyWebhook, to tell a forgery from a stale replay.
var (
	ErrWebhookHeaders   = webhook.ErrMissingHeaders   // a webhook-* header is missing (or ambiguous)
	ErrWebhookTimestamp = webhook.ErrInvalidTimestamp // webhook-timestamp is not Unix seconds
	ErrWebhookStale     = webhook.ErrTimestampSkew    // webhook-timestamp is outside WebhookTolerance
	ErrWebhookSignature = webhook.ErrNoMatch          // no signature matches the body
)

// VerifyWebhook checks a notification as Standard Webhooks asks: the
// webhook-id, webhook-timestamp and webhook-signature headers are present,
// the timestamp is within WebhookTolerance of now, and one of the v1
// signatures (there are two for 24 hours after a secret rotation) is the
// HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" under secret
// (the webhook's "whsec_…" secret). body must be the raw bytes received,
// before any JSON decoding. Deduplicate verified notifications on
// webhook-id: delivery is at least once.
func VerifyWebhook(secret string, headers http.Header, body []byte) error {
	return webhook.Verify(secret, headers, body, time.Now(), WebhookTolerance)
}
