package parcela

import (
	"context"
	"strings"
	"testing"
)

// idStore records the ids the payer's lookups were given, and finds
// nothing.
type idStore struct {
	CheckoutStore
	ids []string
}

func (s *idStore) PublicOffer(ctx context.Context, env Environment, slug, id string) (*Offer, error) {
	s.ids = append(s.ids, id)
	return nil, NotFound("offer")
}

func (s *idStore) OrderKey(ctx context.Context, env Environment, id string) (PayerKey, error) {
	s.ids = append(s.ids, id)
	return PayerKey{}, NotFound("order")
}

func (s *idStore) BillKey(ctx context.Context, env Environment, id string) (PayerKey, error) {
	s.ids = append(s.ids, id)
	return PayerKey{}, NotFound("bill")
}

func (s *idStore) PayerBill(ctx context.Context, env Environment, id string, opens func(PayerKey) bool) (*Bill, *Offer, error) {
	s.ids = append(s.ids, id)
	return nil, nil, NotFound("bill")
}

// The payer's pages look an id up in lower case, as parcela stores it: a
// link's id typed in upper case found nothing.
func TestPayerLookupsTakeIDsInUpperCase(t *testing.T) {
	t.Parallel()
	const id = "6B0F3A0E-9D53-4A8E-9F0B-2F5D1C1E7A10"
	s := &idStore{}
	c := &Checkout{store: s}
	ctx := context.Background()
	_, _ = c.PublicOffer(ctx, Sandbox, "demo", id)
	_, _ = c.OrderForPayer(ctx, Sandbox, id, "CODE")
	_ = c.CheckOrderCode(ctx, Sandbox, id, "CODE")
	_, _, _, _ = c.payerBill(ctx, Sandbox, id, "CODE")
	_, _, _ = c.BillForPayer(ctx, Sandbox, id, "CODE")
	if len(s.ids) != 5 {
		t.Fatalf("looked up %v, want five lookups", s.ids)
	}
	for _, got := range s.ids {
		if got != strings.ToLower(id) {
			t.Errorf("looked up %q, want it in lower case", got)
		}
	}
}
