package client_test

import (
	"context"
	"testing"

	"parcela/client"
)

// chargeWithDueDay sells one more financed order in the sandbox, its
// installments due on dueDay.
func chargeWithDueDay(t *testing.T, c *client.Client, dueDay int) {
	t.Helper()
	if _, err := chargeDueOn(c, dueDay); err != nil {
		t.Fatal(err)
	}
}

// An integrator walks every bill (to reconcile, to export to the ERP)
// while sales go on. Bills are created only, none leaves the listing, yet
// the walk yielded one of them twice (an audit): GET /bills pages by OFFSET, and a
// new sale's installment due on the 1st sorts before the ones due on the
// 10th that the walk had passed.
func TestBillsWhileSelling(t *testing.T) {
	sandbox := startSandbox()
	defer sandbox.Close()
	c, err := client.New(sandbox.URL, sandbox.Token)
	if err != nil {
		t.Fatal(err)
	}
	chargeWithDueDay(t, c, 10)
	chargeWithDueDay(t, c, 10)
	before := map[string]bool{}
	for bill, err := range c.Bills(context.Background(), client.ListBillsParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		before[bill.Id] = true
	}
	seen := map[string]int{}
	n := 0
	for bill, err := range c.Bills(context.Background(), client.ListBillsParams{PerPage: client.Ptr(2)}) {
		if err != nil {
			t.Fatal(err)
		}
		seen[bill.Id]++
		if seen[bill.Id] > 1 {
			t.Errorf("bill %s (%s due %s) yielded %d times", bill.Id, bill.BillType, bill.DueDate.Format("2006-01-02"), seen[bill.Id])
		}
		n++
		if n == 4 { // the walk is past the first installments; a sale happens
			chargeWithDueDay(t, c, 1)
		}
	}
	for id := range before {
		if seen[id] == 0 {
			t.Errorf("bill %s, there before the walk, never yielded", id)
		}
	}
	t.Logf("%d yielded, %d distinct, %d there before the walk", n, len(seen), len(before))
}
