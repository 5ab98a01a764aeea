package jobs

import (
	"context"
	"testing"

	"parcela"
	"parcela/sqldb"
)

// Sandbox deliveries are queued behind production's (River fetches by
// priority first), and a batch never mixes the two environments, where a
// sandbox backlog stood before every production delivery queued after it.
func TestDeliveryParamsPutTheSandboxBehindProduction(t *testing.T) {
	t.Parallel()
	jobs := []sqldb.DeliveryJob{
		{DeliveryID: "s1", Environment: parcela.Sandbox}, {DeliveryID: "s2", Environment: parcela.Sandbox},
		{DeliveryID: "p1", Environment: parcela.Production}, {DeliveryID: "p2", Environment: parcela.Production},
		{DeliveryID: "s-retry", Environment: parcela.Sandbox, Generation: 1, Attempt: 1},
		{DeliveryID: "p-retry", Environment: parcela.Production, Generation: 1, Attempt: 1},
	}
	params := deliveryParams("q", jobs)
	want := map[string]int{"s1": 2, "s2": 2, "p1": 1, "p2": 1, "s-retry": 2, "p-retry": 1}
	seen := 0
	for _, p := range params {
		args := p.Args.(DeliveryArgs)
		ids := args.Batch
		if ids == nil {
			ids = []string{args.DeliveryID}
		}
		for _, id := range ids {
			seen++
			if p.InsertOpts.Priority != want[id] {
				t.Errorf("%s in a job of priority %d (batch %v), want %d", id, p.InsertOpts.Priority, ids, want[id])
			}
		}
	}
	if seen != len(jobs) {
		t.Fatalf("%d deliveries in %d jobs, want %d", seen, len(params), len(jobs))
	}
}

// Each environment's attempts have slots of their own: sandbox receivers
// that hang hold every sandbox slot and none of production's, where they
// shared one set and production's attempts were deferred behind them.
func TestEnvironmentSlotsAreTheirOwn(t *testing.T) {
	t.Parallel()
	s := newEnvironmentSlots(2)
	ctx := context.Background()
	for range 2 {
		if !s.of(parcela.Sandbox).take(ctx) {
			t.Fatal("a free sandbox slot was not taken")
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel() // a full set answers at once
	if s.of(parcela.Sandbox).take(done) {
		t.Fatal("a third sandbox attempt took a slot of two")
	}
	for range 2 {
		if !s.of(parcela.Production).take(done) {
			t.Fatal("a production attempt found no slot while the sandbox's were taken")
		}
	}
}
