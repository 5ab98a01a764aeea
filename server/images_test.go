package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"parcela"
	"parcela/server"
)

// paymentsFake knows one Pix payment and counts the lookups.
type paymentsFake struct {
	parcela.PaymentService
	lookups atomic.Int32
}

const fakePaymentID = "0195a3f0-0000-7000-8000-000000000001"

func (p *paymentsFake) PublicPayment(_ context.Context, env parcela.Environment, id string) (*parcela.Payment, error) {
	p.lookups.Add(1)
	if id != fakePaymentID || env != parcela.Sandbox {
		return nil, parcela.NotFound("payment")
	}
	code := "00020101021226820014br.gov.bcb.pix2560pix.example.com/qr/v2/cobv/0195a3f05204000053039865802BR5913ESCOLA6009SAO PAULO62070503***6304ABCD"
	return &parcela.Payment{ID: id, Environment: env, Method: parcela.MethodPix, Barcode: &code}, nil
}

// An image is rendered once: later requests come from the cache, with
// strong cache headers, and a matching If-None-Match is a 304.
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
	if h.Get("Cache-Control") != "public, max-age=31536000, immutable" || len(etag) < 10 || etag[0] != '"' {
		t.Fatalf("cache headers %v", h)
	}
	for range 5 {
		status, h, again := get(t, http.DefaultClient, url, "", "")
		if status != 200 || !bytes.Equal(again, first) || h.Get("ETag") != etag {
			t.Fatalf("again: %d %v", status, h)
		}
	}
	if n := payments.lookups.Load(); n != 1 {
		t.Fatalf("%d lookups for one image", n)
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
	// Without a cache every request renders again.
	uncached := &paymentsFake{}
	srv = limitedServer(t, server.Services{Payments: uncached}, server.Config{ImageCacheBytes: -1})
	for range 3 {
		get(t, http.DefaultClient, srv.URL+"/external_api/v1/payments/"+fakePaymentID+"/barcode.png", "", "")
	}
	if n := uncached.lookups.Load(); n != 3 {
		t.Fatalf("%d lookups without a cache", n)
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
