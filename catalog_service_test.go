package parcela

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Offers are created in turns, one per two cores: a request that finds
// every turn taken waits without reading or checking anything, and gives
// up with its context, where a company creating offers as fast as its rate
// limit let it checked their plans on every core at once.
func TestOffersAreCreatedInTurns(t *testing.T) {
	t.Parallel()
	// A nil store: any read would panic.
	s := NewCatalog(struct{ CatalogStore }{}, NewTestClock(time.Date(2026, 11, 26, 10, 0, 0, 0, SaoPaulo)))
	for range cap(s.offerChecks) {
		s.offerChecks <- struct{}{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.CreateOffer(ctx, Auth{CompanyID: "c", Environment: Sandbox}, OfferRequest{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("an offer created while every turn was taken: %v", err)
	}
}
