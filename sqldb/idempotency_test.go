package sqldb_test

import (
	"context"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			ctx := context.Background()
			clock := parcela.NewTestClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
			db := sqldbtest.Open(t, e, clock)
			c := sqldbtest.Company(t, db)
			a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}

			if r, err := db.ClaimIdempotencyKey(ctx, a, "k1", "h1"); r != nil || err != nil {
				t.Fatalf("first claim: %v %v", r, err)
			}
			if _, err := db.ClaimIdempotencyKey(ctx, a, "k1", "h1"); parcela.ErrorCode(err) != parcela.EIDEMPOTENTFLIGHT {
				t.Fatalf("claim in flight: %v", err)
			}
			if _, err := db.ClaimIdempotencyKey(ctx, a, "k1", "h2"); parcela.ErrorCode(err) != parcela.EIDEMPOTENTREUSED {
				t.Fatalf("other body: %v", err)
			}
			if err := db.CompleteIdempotencyKey(ctx, a, "k1", 201, []byte(`{"id":"x"}`)); err != nil {
				t.Fatal(err)
			}
			r, err := db.ClaimIdempotencyKey(ctx, a, "k1", "h1")
			if err != nil || r == nil || r.Status != 201 || string(r.Body) != `{"id":"x"}` {
				t.Fatalf("replay: %+v %v", r, err)
			}
			// Keys are per company and environment.
			other := parcela.Auth{CompanyID: c.ID, Environment: parcela.Production}
			if r, err := db.ClaimIdempotencyKey(ctx, other, "k1", "h9"); r != nil || err != nil {
				t.Fatalf("other environment: %v %v", r, err)
			}
			// A released claim can be taken again.
			if err := db.ReleaseIdempotencyKey(ctx, other, "k1"); err != nil {
				t.Fatal(err)
			}
			if r, err := db.ClaimIdempotencyKey(ctx, other, "k1", "h9"); r != nil || err != nil {
				t.Fatalf("after release: %v %v", r, err)
			}
			// After 24 hours the record is gone.
			clock.Advance(sqldb.IdempotencyTTL + time.Second)
			n, err := db.DeleteExpiredIdempotencyKeys(ctx)
			if err != nil || n < 2 {
				t.Fatalf("cleanup deleted %d: %v", n, err)
			}
			if r, err := db.ClaimIdempotencyKey(ctx, a, "k1", "h2"); r != nil || err != nil {
				t.Fatalf("claim after expiry: %v %v", r, err)
			}
		})
	}
}
