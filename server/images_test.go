package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"parcela"
	"parcela/server"
)

// paymentsFake knows one Pix payment and counts the lookups.
type paymentsFake struct {
	parcela.PaymentService
	lookups atomic.Int32
	// ended, when set, is the status the payment has ended in.
	ended atomic.Value
}

const fakePaymentID = "0195a3f0-0000-7000-8000-000000000001"

func (p *paymentsFake) PublicPayment(_ context.Context, env parcela.Environment, id string) (*parcela.Payment, error) {
	p.lookups.Add(1)
	if id != fakePaymentID || env != parcela.Sandbox {
		return nil, parcela.NotFound("payment")
	}
	code := "00020101021226820014br.gov.bcb.pix2560pix.example.com/qr/v2/cobv/0195a3f05204000053039865802BR5913ESCOLA6009SAO PAULO62070503***6304ABCD"
	status, _ := p.ended.Load().(string)
	if status == "" {
		status = parcela.PaymentUnpaid
	}
	return &parcela.Payment{ID: id, Environment: env, Method: parcela.MethodPix, Status: status, Barcode: &code,
		ExpiresAt: time.Now().Add(48 * time.Hour)}, nil
}

// An image is the same at every request, with a validator, kept by caches
// an hour at most (never past the payment's expiry: TestImageOfAnEndedPaymentIsGone),
// and a matching If-None-Match is a 304. The payment is read at every
// request, as it may have ended since.
func TestPaymentImageCached(t *testing.T) {
	t.Parallel()
	payments := &paymentsFake{}
	srv := limitedServer(t, server.Services{Payments: payments}, server.Config{})
	url := srv.URL + "/external_api/v1/payments/" + fakePaymentID + "/barcode.png"
	status, h, first := get(t, http.DefaultClient, url, "", "")
	if status != 200 || h.Get("Content-Type") != "image/png" || !bytes.HasPrefix(first, []byte("\x89PNG")) {
		t.Fatalf("%d %v", status, h)
	}
	etag := h.Get("ETag")
	if h.Get("Cache-Control") != "public, max-age=3600" || len(etag) < 10 || etag[0] != '"' {
		t.Fatalf("cache headers %v", h)
	}
	for range 5 {
		status, h, again := get(t, http.DefaultClient, url, "", "")
		if status != 200 || !bytes.Equal(again, first) || h.Get("ETag") != etag {
			t.Fatalf("again: %d %v", status, h)
		}
	}
	if n := payments.lookups.Load(); n != 6 {
		t.Fatalf("%d lookups for six requests: the payment is read at each", n)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("If-None-Match", `"other", `+etag)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotModified || res.Header.Get("ETag") != etag {
		t.Fatalf("If-None-Match: %d %v", res.StatusCode, res.Header)
	}
	// Without a cache every request renders again, the same image.
	uncached := &paymentsFake{}
	srv = limitedServer(t, server.Services{Payments: uncached}, server.Config{ImageCacheBytes: -1})
	for range 3 {
		if status, h, again := get(t, http.DefaultClient, srv.URL+"/external_api/v1/payments/"+fakePaymentID+"/barcode.png", "", ""); status != 200 ||
			!bytes.Equal(again, first) || h.Get("ETag") != etag {
			t.Fatalf("without a cache: %d %v", status, h)
		}
	}
	// Ended since it was served, it has no image, from the cache either.
	for _, status := range []string{parcela.PaymentPaid, parcela.PaymentExpired, parcela.PaymentCanceled} {
		payments.ended.Store(status)
		if got, _, _ := get(t, http.DefaultClient, url, "", ""); got != http.StatusNotFound {
			t.Fatalf("the image of a %s payment: %d, want 404", status, got)
		}
	}
}

// Images are limited per client address; the limit answers a problem
// document with Retry-After.
func TestPaymentImageRateLimited(t *testing.T) {
	t.Parallel()
	srv := limitedServer(t, server.Services{Payments: &paymentsFake{}}, server.Config{ImageRateLimit: 3})
	startOfNextSecond()
	var statuses []int
	for range 5 {
		status, h, body := get(t, http.DefaultClient, srv.URL+"/external_api/v1/payments/"+fakePaymentID+"/pix.png", "", "")
		statuses = append(statuses, status)
		if status == http.StatusTooManyRequests {
			var p server.Problem
			if err := json.Unmarshal(body, &p); err != nil || p.Code != parcela.ERATELIMITED || h.Get("Retry-After") == "" {
				t.Fatalf("429: %v %s", h, body)
			}
		}
	}
	// pix.png of a Pix payment is a 404 (its QR code is barcode.png): the
	// limit counts misses too.
	if want := []int{404, 404, 404, 429, 429}; !slices.Equal(statuses, want) {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
}

// Another environment's payment, a payment without the image asked for, a
// missing payment and an id that is none answer the same 404, on every
// engine: the answer does not tell which payment ids exist.
func TestPaymentImageMissingAnswersAlike(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		offer, order := b.order()
		up, _ := configs(offer)
		o := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, "boleto", 1)).want(t, 200).JSON(t)
		boleto := o["billings"].([]any)[0].(map[string]any)["bills"].([]any)[0].(map[string]any)["payments"].([]any)[0].(map[string]any)["id"].(string)
		b.send(b.sandbox.URL, "", "GET", "/external_api/v1/payments/"+boleto+"/barcode.png", nil, nil).want(t, 200)
		var first []byte
		for _, at := range []struct{ base, path string }{
			{b.production.URL, boleto + "/barcode.png"},
			{b.sandbox.URL, boleto + "/pix.png"},
			{b.sandbox.URL, "0195a3f0-0000-7000-8000-000000000000/barcode.png"},
			{b.sandbox.URL, "not-an-id/pix.png"},
		} {
			r := b.send(at.base, "", "GET", "/external_api/v1/payments/"+at.path, nil, nil).want(t, 404)
			var p map[string]any
			if err := json.Unmarshal(r.Body, &p); err != nil {
				t.Fatal(err)
			}
			delete(p, "request_id")
			delete(p, "type") // the listener's own catalogue address
			same, _ := json.Marshal(p)
			if first == nil {
				first = same
			} else if !bytes.Equal(same, first) {
				t.Fatalf("%s answers %s, not %s", at.path, same, first)
			}
		}
	})
}

// A payment that can no longer be paid (expired, or canceled with its
// billing) has no image to pay it with, as its payment page shows no code;
// and while it can, caches keep its image an hour at most. The image of an
// expired boleto was served, "immutable" for a year.
func TestImageOfAnEndedPaymentIsGone(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		for _, end := range []string{"expire", "cancel"} {
			offer, order := b.order()
			up, _ := configs(offer)
			o := b.call("POST", "/external_api/v1/orders/"+order["id"].(string)+"/charge", chargeBody(up, "boleto", 1)).want(t, 200).JSON(t)
			billing := o["billings"].([]any)[0].(map[string]any)
			payment := billing["bills"].([]any)[0].(map[string]any)["payments"].([]any)[0].(map[string]any)["id"].(string)
			img := "/external_api/v1/payments/" + payment + "/barcode.png"
			if r := b.send(b.sandbox.URL, "", "GET", img, nil, nil).want(t, 200); r.Header.Get("Cache-Control") != "public, max-age=3600" {
				t.Errorf("a live boleto's image: Cache-Control %q", r.Header.Get("Cache-Control"))
			}
			if end == "expire" {
				b.call("POST", "/external_api/v1/sandbox/payments/"+payment+"/expire", nil).want(t, 200)
			} else {
				b.call("POST", "/external_api/v1/billings/"+billing["id"].(string)+"/cancel",
					map[string]any{"cancelation_reason": "refunded_by_company"}).want(t, 200)
			}
			if r := b.send(b.sandbox.URL, "", "GET", img, nil, nil); r.Status != http.StatusNotFound {
				t.Errorf("%s: the image of an ended payment: %d (Cache-Control %q), want 404", end, r.Status, r.Header.Get("Cache-Control"))
			}
		}
	})
}
