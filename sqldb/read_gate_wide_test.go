package sqldb

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parcela"
)

// A page of the most rows (per_page 1,000) reads as many rows from its
// first page as a page 1,000 deep reads past, and more of them whole (each
// bill with its billing and payments), so it takes its company's turn as a
// deep page does; so does any page of more than 100 rows. Where it took none, one company's widest first pages,
// sent a few at once, filled the gate, and another company's read waited
// behind all of them.
func TestReadGateAdmitsWidePagesByTurns(t *testing.T) {
	t.Parallel()
	busy := parcela.Auth{CompanyID: "busy", Environment: parcela.Production}
	quiet := parcela.Auth{CompanyID: "quiet", Environment: parcela.Production}
	wide := parcela.Page{Page: 1, PerPage: parcela.MaxPerPage}
	// Any page of more than 100 rows takes its turn; one of 100 at the
	// start does not.
	r := gateSetup(t, 4)
	for _, p := range []parcela.Page{{Page: 1, PerPage: 101}, {Page: 1, PerPage: 500}, {Page: 2, PerPage: 500}, {Page: 10, PerPage: 100}} {
		if r.pagesOf(busy, p).owner == "" {
			t.Errorf("page %d of %d takes no turn", p.Page, p.PerPage)
		}
	}
	for _, p := range []parcela.Page{{Page: 1, PerPage: 100}, {Page: 9, PerPage: 100}, {Page: 1, PerPage: parcela.DefaultPerPage}} {
		if r.pagesOf(busy, p).owner != "" {
			t.Errorf("page %d of %d takes a turn", p.Page, p.PerPage)
		}
	}
	for name, gate := range map[string]*readGate{"sqlite": newReadGate(4), "postgres": newPageGate(4)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := gateSetup(t, 4)
			r.gate = gate
			ctx := context.Background()
			// More wide pages than the gate holds: 4 ÷ their weight, and one.
			fits := int(gate.n / gate.weight(true))
			total := fits + 1
			release := make(chan struct{})
			var admitted atomic.Int32
			var pages sync.WaitGroup
			for range total {
				pages.Go(func() {
					rows, err := r.pagesOf(busy, wide).query(ctx, `SELECT 1`)
					if err != nil {
						t.Error(err)
						return
					}
					admitted.Add(1)
					<-release
					rows.Close()
				})
			}
			defer pages.Wait()
			defer close(release)
			// Every page of the busy company came: waiting for its turn, or
			// the gate full of them and the rest queued at it.
			key := busy.CompanyID + "/" + string(busy.Environment)
			for deadline := time.Now().Add(5 * time.Second); ; {
				gate.turns.mu.Lock()
				users := 0
				if tn := gate.turns.turns[key]; tn != nil {
					users = tn.users
				}
				gate.turns.mu.Unlock()
				in := int(admitted.Load())
				if (users == total && in == int(gate.perOwner())) || (in == fits && !gate.sem.TryAcquire(0)) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the busy company's pages never settled (%d admitted, %d at its turns)", admitted.Load(), users)
				}
				time.Sleep(time.Millisecond)
			}
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			rows, err := r.pagesOf(quiet, wide).query(qctx, `SELECT 1`)
			if err != nil {
				t.Fatalf("another company's page waited behind the busy one's widest pages (%d of them in the gate): %v", admitted.Load(), err)
			}
			rows.Close()
			if n := int(admitted.Load()); n != int(gate.perOwner()) {
				t.Fatalf("%d of the busy company's wide pages in the gate at once, want %d", n, gate.perOwner())
			}
		})
	}
}
