package parcela

import "testing"

// Events of one change share its created_at, so a receiver that skips an
// event older than the last one it applied cannot order two of one entity
// by it: a financed billing whose every bill one change pays goes active,
// then finished. Their ids (UUIDv7, made in the change's order) sort as
// they happened, as the webhooks guide tells receivers.
func TestEventsOfOneChangeSortByID(t *testing.T) {
	t.Parallel()
	m, o, billing, c := chargedInMemory(t)
	if err := m.chargeEvents(o, billing, c); err != nil {
		t.Fatal(err)
	}
	for _, b := range billing.Bills {
		b.Status = BillPaid
	}
	if err := m.advance(o, billing); err != nil {
		t.Fatal(err)
	}
	var moves []string
	for i, e := range m.c.Events {
		if e.CreatedAt != m.c.At {
			t.Errorf("event %d (%s %s) at %s, not the change's %s", i, e.Entity, e.Event, e.CreatedAt, m.c.At)
		}
		if i > 0 && e.ID <= m.c.Events[i-1].ID {
			t.Errorf("event %d (%s %s) has id %s, not after %s", i, e.Entity, e.Event, e.ID, m.c.Events[i-1].ID)
		}
		if e.Entity == "billing" {
			moves = append(moves, e.Event)
		}
	}
	if want := []string{BillingWaitingPayment, BillingActive, BillingFinished}; len(moves) != 3 || moves[0] != want[0] || moves[1] != want[1] || moves[2] != want[2] {
		t.Fatalf("billing events %v, want %v", moves, want)
	}
}
