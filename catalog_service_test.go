package parcela

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
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

// admittingStore tells which company's offer each CreateOffer past its
// turn is, and holds it there until the test lets it go.
type admittingStore struct {
	CatalogStore
	admitted chan string
	release  chan struct{}
}

func (s admittingStore) Company(_ context.Context, id string) (*Company, error) {
	s.admitted <- id
	<-s.release
	return nil, Errorf(ENOTFOUND, "company not found")
}

// waitWaitingOffers returns once n CreateOffer calls wait for a turn.
func waitWaitingOffers(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		waiting := 0
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "[select") && strings.Contains(g, "parcela.(*Catalog).CreateOffer") {
				waiting++
			}
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d offers wait for a turn, want %d", waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// One company's offers sent many at once wait for its own turns, not
// ahead of another company's: the other's offer is checked after at most
// one more of the busy company's, where it waited for all of them. The
// busy company's sandbox is a company of its own here, as it is for the
// turns (a load test there must not hold its production offers).
func TestOffersAreCreatedInTurnsByCompany(t *testing.T) {
	t.Parallel()
	store := admittingStore{admitted: make(chan string, 16), release: make(chan struct{})}
	s := NewCatalog(store, NewTestClock(time.Date(2026, 11, 26, 10, 0, 0, 0, SaoPaulo)))
	s.offerChecks = make(chan struct{}, 1) // as on two cores
	var wg sync.WaitGroup
	create := func(a Auth) {
		wg.Go(func() { _, _ = s.CreateOffer(context.Background(), a, OfferRequest{}) })
	}
	busy := Auth{CompanyID: "busy", Environment: Sandbox}
	create(busy)
	if got := <-store.admitted; got != "busy" {
		t.Fatalf("first admitted: %s", got)
	}
	for i := range 3 {
		create(busy)
		waitWaitingOffers(t, i+1)
	}
	create(Auth{CompanyID: "quiet", Environment: Production})
	waitWaitingOffers(t, 4)
	var order []string
	for range 4 {
		store.release <- struct{}{}
		order = append(order, <-store.admitted)
	}
	store.release <- struct{}{}
	wg.Wait()
	if order[0] != "quiet" && order[1] != "quiet" {
		t.Fatalf("after the busy company's first offer, offers were checked in the order %v: the quiet company's waited for the busy one's", order)
	}
}
