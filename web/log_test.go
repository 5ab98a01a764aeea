package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"parcela"
)

// failingOffers fails every offer read as a broken database would.
type failingOffers struct{ parcela.CheckoutService }

func (failingOffers) PublicOffer(context.Context, parcela.Environment, string, string) (*parcela.Offer, error) {
	return nil, errors.New("disk I/O error")
}

// A page that fails logs its error and its access line under one request
// id, which the answer carries: where the pages' lines held none, an
// operator could not tell which request a "page failed" line was, nor find
// it from what a payer reported.
func TestPageLinesShareTheRequestID(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *Deps) { d.Checkout = failingOffers{d.Checkout} })
	res := b.get(t, "/pay/demo/offers/"+testOfferID)
	if res.status != http.StatusInternalServerError {
		t.Fatalf("status %d", res.status)
	}
	id := res.header.Get("X-Request-Id")
	if !strings.HasPrefix(id, "req_") {
		t.Fatalf("X-Request-Id %q", id)
	}
	msgs := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(b.logs.String()), "\n") {
		var l struct {
			Msg       string
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		msgs[l.Msg] = l.RequestID
	}
	for _, msg := range []string{"page failed", "page"} {
		if msgs[msg] != id {
			t.Errorf("%q line has request id %q, want %q:\n%s", msg, msgs[msg], id, b.logs.String())
		}
	}
}

// canceledOffers fails an offer read as the store does once its request's
// context ended.
type canceledOffers struct{ parcela.CheckoutService }

func (canceledOffers) PublicOffer(ctx context.Context, _ parcela.Environment, _, _ string) (*parcela.Offer, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("read offer: %w", ctx.Err())
}

// A page whose client left is logged 499, as the API logs it, not as a
// failed page (an ERROR line with a 500 counted) for every payer who
// closed a tab while a page loaded.
func TestPageWhoseClientLeftIs499(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *Deps) { d.Checkout = canceledOffers{d.Checkout} })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "GET", "/pay/demo/offers/"+testOfferID, nil))
	if rec.Code != 499 {
		t.Errorf("status %d, want 499", rec.Code)
	}
	if strings.Contains(b.logs.String(), "page failed") || !strings.Contains(b.logs.String(), `"status":499`) {
		t.Errorf("log:\n%s", b.logs)
	}
}

// collidingOffers fails an offer read as the store does when its
// transaction kept colliding past its retries.
type collidingOffers struct{ parcela.CheckoutService }

func (collidingOffers) PublicOffer(context.Context, parcela.Environment, string, string) (*parcela.Offer, error) {
	return nil, parcela.Errorf(parcela.ECONFLICT, "concurrent requests kept colliding; nothing was done; retry")
}

// A page whose read kept colliding, or whose database is unavailable, is
// the 503 page with Retry-After (the API answers them 409 and 503, each
// to retry): a conflict was the 500 page logged as a failed page, and no
// 503 page said when to come back.
func TestPageUnavailableOrCollidingIs503WithRetryAfter(t *testing.T) {
	t.Parallel()
	for name, fail := range map[string]func(parcela.CheckoutService) parcela.CheckoutService{
		"conflict":    func(c parcela.CheckoutService) parcela.CheckoutService { return collidingOffers{c} },
		"unavailable": func(c parcela.CheckoutService) parcela.CheckoutService { return unavailableOffers{c} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(d *Deps) { d.Checkout = fail(d.Checkout) })
			res := b.get(t, "/pay/demo/offers/"+testOfferID)
			if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" {
				t.Fatalf("status %d, Retry-After %q", res.status, res.header.Get("Retry-After"))
			}
			if strings.Contains(b.logs.String(), "page failed") {
				t.Errorf("logged as failed:\n%s", b.logs)
			}
		})
	}
}

// unavailableOffers fails an offer read as an unreachable database does.
type unavailableOffers struct{ parcela.CheckoutService }

func (unavailableOffers) PublicOffer(context.Context, parcela.Environment, string, string) (*parcela.Offer, error) {
	return nil, parcela.Errorf(parcela.EUNAVAILABLE, "the database is unavailable")
}
