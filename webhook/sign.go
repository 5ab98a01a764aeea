package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// secretPrefix marks a Standard Webhooks signing secret; the rest is the
// base64 of the HMAC key.
const secretPrefix = "whsec_"

// DefaultTolerance is the replay window the Standard Webhooks specification
// recommends receivers allow between webhook-timestamp and their own clock.
const DefaultTolerance = 5 * time.Minute

// Errors returned by Verify, so a receiver can tell a replay from a forgery.
var (
	ErrMissingHeaders   = errors.New("webhook: missing (or, under keys differing in case, ambiguous) webhook-id, webhook-timestamp or webhook-signature header")
	ErrInvalidTimestamp = errors.New("webhook: webhook-timestamp is not unix seconds")
	ErrTimestampSkew    = errors.New("webhook: webhook-timestamp is outside the tolerance")
	ErrNoMatch          = errors.New("webhook: no signature matches")
)

// NewSecret returns a fresh signing secret: "whsec_" and the standard base64
// of 32 random bytes (the key size of HMAC-SHA256).
func NewSecret() (string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook: generating secret: %w", err)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// decodeSecret returns the HMAC key of a secret. The prefix is optional, as in
// the reference libraries, so a receiver can paste either form.
func decodeSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil || len(key) == 0 {
		// The secret itself never goes into the message: errors end up in logs.
		return nil, errors.New("webhook: signing secret is not whsec_ followed by base64")
	}
	return key, nil
}

// mac computes HMAC-SHA256 over "msgID.unixSeconds.body", the signed content
// of the specification.
func mac(key []byte, msgID string, unix int64, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msgID))
	h.Write([]byte{'.'})
	h.Write([]byte(strconv.FormatInt(unix, 10)))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Sign returns the "v1,<base64>" signature of one message under one secret.
func Sign(secret, msgID string, timestamp time.Time, body []byte) (string, error) {
	key, err := decodeSecret(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, msgID, timestamp.Unix(), body)), nil
}

// SignatureHeader returns the webhook-signature value: one signature per
// secret, space-separated. During a secret rotation both the old and the new
// secret sign, so receivers verify with whichever one they hold.
func SignatureHeader(secrets []string, msgID string, timestamp time.Time, body []byte) (string, error) {
	if len(secrets) == 0 {
		return "", errors.New("webhook: no signing secret")
	}
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := Sign(s, msgID, timestamp, body)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// Verify checks a received webhook the way a receiver should: all three
// headers present, webhook-timestamp within tolerance of now (either side, to
// stop replays), and at least one v1 signature in webhook-signature matching
// the body. Signatures of other versions are skipped, as the specification
// asks, so new schemes can be added without breaking receivers. A header
// map built by hand with keys in lower case (a serverless adapter's) is
// read too.
func Verify(secret string, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := decodeSecret(secret)
	if err != nil {
		return err
	}
	id := headerValue(header, "webhook-id")
	ts := headerValue(header, "webhook-timestamp")
	sigs := headerValue(header, "webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeaders
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrInvalidTimestamp
	}
	if skew := now.Sub(time.Unix(unix, 0)).Abs(); skew > tolerance {
		return ErrTimestampSkew
	}
	want := mac(key, id, unix, body)
	for _, sig := range strings.Fields(sigs) {
		version, encoded, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrNoMatch
}

// headerValue is the first value under the key equal to name in any
// letter case: Get reads only the canonical key ("Webhook-Id"), and a map
// filled by assignment (h["webhook-id"] = …) answered ErrMissingHeaders
// for a signed request (an audit). Two such keys with different first
// values are ambiguous, and read as none: which one a map's random order
// gave decided the answer, and a receiver reading the other could take
// an id that was never verified (a review).
func headerValue(h http.Header, name string) string {
	value, found := "", false
	for k, vs := range h {
		if len(vs) == 0 || !strings.EqualFold(k, name) {
			continue
		}
		if found && vs[0] != value {
			return ""
		}
		value, found = vs[0], true
	}
	return value
}
