package parcela

import (
	"context"
	"errors"
	"slices"
	"testing"
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
