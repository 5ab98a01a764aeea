package webhook

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks published test vector (also used by the svix and
// standard-webhooks reference libraries).
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecUnix   = 1614265330
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func vecHeader(sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", vecID)
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", sig)
	return h
}

func TestSignMatchesPublishedVector(t *testing.T) {
	got, err := Sign(vecSecret, vecID, time.Unix(vecUnix, 0), []byte(vecBody))
	if err != nil {
		t.Fatal(err)
	}
	if got != vecSig {
		t.Fatalf("Sign = %q, want %q", got, vecSig)
	}
}

func TestSignatureHeaderSignsWithEverySecret(t *testing.T) {
	other, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	got, err := SignatureHeader([]string{other, vecSecret}, vecID, time.Unix(vecUnix, 0), []byte(vecBody))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(got, " ")
	if len(parts) != 2 || parts[1] != vecSig || !strings.HasPrefix(parts[0], "v1,") {
		t.Fatalf("SignatureHeader = %q", got)
	}
	// A receiver holding either secret accepts the rotated header.
	now := time.Unix(vecUnix, 0)
	for _, secret := range []string{other, vecSecret} {
		if err := Verify(secret, vecHeader(got), []byte(vecBody), now, DefaultTolerance); err != nil {
			t.Errorf("Verify with one of the rotated secrets: %v", err)
		}
	}
	if _, err := SignatureHeader(nil, vecID, now, nil); err == nil {
		t.Error("SignatureHeader with no secrets: want error")
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(vecUnix, 0)
	body := []byte(vecBody)
	tests := []struct {
		name   string
		secret string
		header http.Header
		body   []byte
		now    time.Time
		want   error
	}{
		{"valid", vecSecret, vecHeader(vecSig), body, now, nil},
		{"secret without prefix", strings.TrimPrefix(vecSecret, "whsec_"), vecHeader(vecSig), body, now, nil},
		{"one of several valid", vecSecret, vecHeader("v1,bm9wZQ== v2,whatever " + vecSig), body, now, nil},
		{"within tolerance", vecSecret, vecHeader(vecSig), body, now.Add(4 * time.Minute), nil},
		{"tampered body", vecSecret, vecHeader(vecSig), []byte(`{"test": 2432232315}`), now, ErrNoMatch},
		{"wrong secret", "whsec_" + base64.StdEncoding.EncodeToString([]byte("another key")), vecHeader(vecSig), body, now, ErrNoMatch},
		{"only other versions", vecSecret, vecHeader("v2," + strings.TrimPrefix(vecSig, "v1,")), body, now, ErrNoMatch},
		{"too old", vecSecret, vecHeader(vecSig), body, now.Add(6 * time.Minute), ErrTimestampSkew},
		{"too new", vecSecret, vecHeader(vecSig), body, now.Add(-6 * time.Minute), ErrTimestampSkew},
		{"missing headers", vecSecret, http.Header{}, body, now, ErrMissingHeaders},
		// A map filled by assignment, as serverless adapters do (an audit).
		{"keys in lower case", vecSecret, http.Header{"webhook-id": {vecID}, "webhook-timestamp": {strconv.FormatInt(vecUnix, 10)},
			"webhook-signature": {vecSig}}, body, now, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Verify(tt.secret, tt.header, tt.body, tt.now, DefaultTolerance); !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}

	h := vecHeader(vecSig)
	h.Set("webhook-timestamp", "yesterday")
	if err := Verify(vecSecret, h, body, now, DefaultTolerance); !errors.Is(err, ErrInvalidTimestamp) {
		t.Errorf("non-numeric timestamp: %v", err)
	}
	if err := Verify("whsec_!!!", vecHeader(vecSig), body, now, DefaultTolerance); err == nil || strings.Contains(err.Error(), "!!!") {
		t.Errorf("bad secret: %v (want an error that does not echo the secret)", err)
	}
}

func TestNewSecret(t *testing.T) {
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	if !strings.HasPrefix(a, "whsec_") {
		t.Fatalf("secret %q lacks whsec_", a)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if err != nil || len(key) != 32 {
		t.Fatalf("secret key: %d bytes, err %v", len(key), err)
	}
	if _, err := Sign(a, "msg_1", time.Now(), nil); err != nil {
		t.Fatal(err)
	}
}

// Two keys for webhook-id that differ only in letter case, with different
// values: Verify read one by the map's random order, so the same request
// verified on one call and not the next (a review). It is refused, always.
func TestVerifyRefusesAmbiguousHeaderKeys(t *testing.T) {
	h := http.Header{"webhook-id": {vecID}, "WEBHOOK-ID": {"msg_forged"}, "webhook-timestamp": {strconv.FormatInt(vecUnix, 10)},
		"webhook-signature": {vecSig}}
	for range 200 {
		if err := Verify(vecSecret, h, []byte(vecBody), time.Unix(vecUnix, 0), DefaultTolerance); !errors.Is(err, ErrMissingHeaders) {
			t.Fatalf("two webhook-id keys with different values: %v, want ErrMissingHeaders", err)
		}
	}
	// The same value under both is no ambiguity.
	h["WEBHOOK-ID"] = []string{vecID}
	if err := Verify(vecSecret, h, []byte(vecBody), time.Unix(vecUnix, 0), DefaultTolerance); err != nil {
		t.Fatalf("two webhook-id keys with the same value: %v", err)
	}
}
