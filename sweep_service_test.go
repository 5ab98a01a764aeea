package parcela

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"
)

// sweepFailureStore records what a sweep records about its rows.
type sweepFailureStore struct {
	SweepStore
	recorded []SweepFailure
	cleared  []string
}

func (s *sweepFailureStore) RecordSweepFailure(_ context.Context, f SweepFailure) error {
	s.recorded = append(s.recorded, f)
	return nil
}

func (s *sweepFailureStore) ClearSweepFailure(_ context.Context, sweep, id string) error {
	s.cleared = append(s.cleared, sweep+" "+id)
	return nil
}

func TestSweepRowsStandAlone(t *testing.T) {
	t.Parallel()
	store := &sweepFailureStore{}
	s := NewSweeps(store, nil, NewTestClock(moveNow), LinksByEnvironment{})
	row := func(id string, failures int) DueRow {
		return DueRow{Owned: Owned{ID: id, Auth: Auth{CompanyID: "c", Environment: Sandbox}}, BillID: "bill-" + id, Failures: failures}
	}
	boom := errors.New("the provider refused")
	outcome := map[string]error{"fails": boom, "recovers": nil, "moves": nil, "stays": nil}
	moved := map[string]bool{"recovers": true, "moves": true}
	var tried []string
	rep, err := s.each(context.Background(), SweepIssueInstallments,
		[]DueRow{row("fails", 1), row("recovers", 2), row("moves", 0), row("stays", 0)},
		func(r DueRow) (bool, error) {
			tried = append(tried, r.ID)
			return moved[r.ID], outcome[r.ID]
		})
	if err != nil || rep.Moved != 2 || !slices.Equal(tried, []string{"fails", "recovers", "moves", "stays"}) {
		t.Fatalf("report %+v, %v; tried %v", rep, err, tried)
	}
	want := SweepFailure{Sweep: SweepIssueInstallments, Row: row("fails", 1), Failures: 2, Retry: moveNow.Add(SweepBackoff(2)), Err: boom}
	if len(rep.Failed) != 1 || rep.Failed[0] != want || len(store.recorded) != 1 || store.recorded[0] != want {
		t.Fatalf("failed %+v, recorded %+v; want %+v", rep.Failed, store.recorded, want)
	}
	if !slices.Equal(store.cleared, []string{"issue_installments recovers"}) {
		t.Fatalf("cleared %v", store.cleared)
	}

	// A sweep cut short records nothing against the row it was on.
	store.recorded = nil
	ctx, cancel := context.WithCancel(context.Background())
	_, err = s.each(ctx, SweepMarkOverdue, []DueRow{row("a", 0), row("b", 0)}, func(DueRow) (bool, error) {
		cancel()
		return false, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) || len(store.recorded) != 0 {
		t.Fatalf("canceled sweep: %v, recorded %+v", err, store.recorded)
	}
}

// A run goes on past a full batch, and stops at a batch that is not full,
// at one that holds rows it already ran (left where they were, they would
// be selected forever), or once its budget is spent.
func TestSweepRunDrainsFullBatches(t *testing.T) {
	t.Parallel()
	rows := func(from, n int) []DueRow {
		out := make([]DueRow, n)
		for i := range out {
			out[i] = DueRow{Owned: Owned{ID: "row-" + strconv.Itoa(from+i)}}
		}
		return out
	}
	run := func(t *testing.T, clock *TestClock, batches [][]DueRow, tick time.Duration) (SweepReport, int, int) {
		t.Helper()
		s := NewSweeps(&sweepFailureStore{}, nil, clock, LinksByEnvironment{})
		selects, ran := 0, map[string]int{}
		rep, err := s.drain(context.Background(), SweepExpirePayments, func(d Due) ([]DueRow, error) {
			if d.Limit != sweepBatch {
				t.Fatalf("limit %d", d.Limit)
			}
			selects++
			if selects > len(batches) {
				t.Fatalf("selected a %d-th batch", selects)
			}
			return batches[selects-1], nil
		}, func(r DueRow) (bool, error) {
			ran[r.ID]++
			clock.Advance(tick)
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for id, n := range ran {
			if n != 1 {
				t.Fatalf("row %s ran %d times", id, n)
			}
		}
		return rep, selects, len(ran)
	}
	t.Run("until a batch is not full", func(t *testing.T) {
		rep, selects, ran := run(t, NewTestClock(moveNow), [][]DueRow{rows(0, sweepBatch), rows(sweepBatch, sweepBatch), rows(2*sweepBatch, 3)}, 0)
		if selects != 3 || ran != 2*sweepBatch+3 || rep.Moved != ran {
			t.Fatalf("%d selects, %d rows run, report %d", selects, ran, rep.Moved)
		}
	})
	t.Run("until rows come again", func(t *testing.T) {
		again := append(rows(0, 1), rows(sweepBatch, sweepBatch-1)...)
		_, selects, ran := run(t, NewTestClock(moveNow), [][]DueRow{rows(0, sweepBatch), again}, 0)
		if selects != 2 || ran != 2*sweepBatch-1 {
			t.Fatalf("%d selects, %d rows run", selects, ran)
		}
	})
	t.Run("until the budget is spent", func(t *testing.T) {
		tick := sweepRunBudget / sweepBatch
		_, selects, ran := run(t, NewTestClock(moveNow), [][]DueRow{rows(0, sweepBatch), rows(sweepBatch, sweepBatch)}, tick)
		if selects != 1 || ran != sweepBatch {
			t.Fatalf("%d selects, %d rows run", selects, ran)
		}
	})
}
