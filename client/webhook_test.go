package client_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"parcela/client"
	"parcela/webhook"
)

// signed returns the headers the server sends with body, signed by every
// secret at moment at.
func signed(t *testing.T, secrets []string, at time.Time, body []byte) http.Header {
	t.Helper()
	sig, err := webhook.SignatureHeader(secrets, "01a1efd2-ca78-791c-9f4e-ca3dbdd87886", at, body)
	if err != nil {
		t.Fatal(err)
	}
	return http.Header{
		"Webhook-Id":        {"01a1efd2-ca78-791c-9f4e-ca3dbdd87886"},
		"Webhook-Timestamp": {strconv.FormatInt(at.Unix(), 10)},
		"Webhook-Signature": {sig},
	}
}

func TestVerifyWebhook(t *testing.T) {
	t.Parallel()
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	old, _ := webhook.NewSecret()
	body := []byte(`{"id": "01a1efd2-ca78-791c-9f4e-ca3dbdd87886", "entity": "bill", "event": "paid"}`)
	now := time.Now()
	if err := client.VerifyWebhook(secret, signed(t, []string{secret}, now, body), body); err != nil {
		t.Fatalf("a signed notification: %v", err)
	}
	// After a rotation both secrets sign; either verifies, in either place.
	for _, s := range []string{secret, old} {
		if err := client.VerifyWebhook(s, signed(t, []string{old, secret}, now, body), body); err != nil {
			t.Errorf("rotation: %v", err)
		}
	}
	withV2 := signed(t, []string{secret}, now, body)
	withV2.Set("Webhook-Signature", "v2,AAAA "+withV2.Get("Webhook-Signature"))
	if err := client.VerifyWebhook(secret, withV2, body); err != nil {
		t.Errorf("an unknown signature version beside v1: %v", err)
	}
	missing := signed(t, []string{secret}, now, body)
	missing.Del("Webhook-Id")
	for name, c := range map[string]struct {
		secret string
		header http.Header
		body   []byte
		want   error
	}{
		"tampered body":   {secret, signed(t, []string{secret}, now, body), append([]byte(" "), body...), client.ErrWebhookSignature},
		"other secret":    {old, signed(t, []string{secret}, now, body), body, client.ErrWebhookSignature},
		"replayed":        {secret, signed(t, []string{secret}, now.Add(-client.WebhookTolerance-time.Minute), body), body, client.ErrWebhookStale},
		"from the future": {secret, signed(t, []string{secret}, now.Add(client.WebhookTolerance+time.Minute), body), body, client.ErrWebhookStale},
		"missing header":  {secret, missing, body, client.ErrWebhookHeaders},
		"bad timestamp":   {secret, http.Header{"Webhook-Id": {"x"}, "Webhook-Timestamp": {"yesterday"}, "Webhook-Signature": {"v1,AAAA"}}, body, client.ErrWebhookTimestamp},
	} {
		if err := client.VerifyWebhook(c.secret, c.header, c.body); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
	if err := client.VerifyWebhook("not a secret!", signed(t, []string{secret}, now, body), body); err == nil {
		t.Error("a malformed secret verified")
	}
}
