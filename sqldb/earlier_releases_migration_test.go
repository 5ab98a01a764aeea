package sqldb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"parcela"
	"parcela/sqldb"
	"parcela/sqldb/sqldbtest"
)

// Rows the earliest releases left, read by this release after an upgrade
// (an audit of upgrades, which ran those releases' binaries and then this
// one's on their databases). Each test writes the rows as that release
// did, runs the migration again, and checks what the upgraded server
// answers.

const earlierReleasesMigration = "00027_rows_of_earlier_releases.sql"

// A canceled order kept its seat before seats were given back: an offer
// carried over stayed sold out with fewer live orders than seats.
func TestUpgradeCountsSeatsCanceledOrdersKept(t *testing.T) {
	t.Parallel()
	for _, e := range sqldbtest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			upgradeCountsSeats(t, sqldbtest.Open(t, e, sqldb.Config{Enqueuer: quietEnqueuer{}}))
		})
	}
}

func upgradeCountsSeats(t *testing.T, db *sqldb.DB) {
	r := newRound(t, db, 3, false)
	offer := r.order.Offer
	if err := r.patchOffer(offer.ID, `{"seats": 2}`); err != nil {
		t.Fatal(err)
	}
	o := r.pendingOrder(offer.ID)
	if _, err := r.app.Orders.ChargeOrder(r.ctx, r.a, o.ID, r.chargeRequest(offer, 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.app.Orders.CancelOrder(r.ctx, r.a, r.order.ID, ""); err != nil {
		t.Fatal(err)
	}
	// The row as those releases left it: the cancelation gave no seat back.
	if _, err := db.SQLDB().ExecContext(r.ctx, sqldb.Rebind(db, `UPDATE offers SET seats_taken = 2 WHERE id = ?`), offer.ID); err != nil {
		t.Fatal(err)
	}
	if err := sqldb.RunMigrationUp(db, string(db.Dialect())+"/"+earlierReleasesMigration); err != nil {
		t.Fatal(err)
	}
	if n, got := r.sold(offer.ID); n != 1 || got.SeatsTaken != 1 {
		t.Fatalf("seats taken %d (%d orders live) after the upgrade, want 1", got.SeatsTaken, n)
	}
	if _, err := r.app.Orders.ChargeOrder(r.ctx, r.a, r.pendingOrder(offer.ID).ID, r.chargeRequest(offer, 3)); err != nil {
		t.Errorf("a second buyer of a 2-seat offer with one live order: %v", err)
	}
	if n, got := r.sold(offer.ID); n != 2 || got.SeatsTaken != 2 {
		t.Errorf("seats taken %d (%d orders live) after the second sale, want 2", got.SeatsTaken, n)
	}
}

// A key claimed 'in_flight' by those releases, whose process was killed
// before the answer, was read as a committed PATCH or DELETE left
// unanswered: a POST has nothing to read back, and every retry of the
// order or charge was answered 500 for the key's 24 hours. After the
// upgrade the key is free, so the retry runs, as those releases ran it;
// the keys this release writes are kept.
func TestUpgradeFreesKeysLeftInFlight(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		c := sqldbtest.Company(t, db)
		a := parcela.Auth{CompanyID: c.ID, Environment: parcela.Sandbox}
		now := time.Now()
		created, expires := now.Add(-3*time.Minute).UnixMilli(), now.Add(1000*time.Hour).UnixMilli()
		for key, state := range map[string]string{"legacy": "in_flight", "answered": "done", "unanswered": "unanswered"} {
			if _, err := db.SQLDB().ExecContext(ctx, sqldb.Rebind(db, `INSERT INTO idempotency_keys (company_id, environment, idempotency_key,
				request_hash, state, response_status, response_body, created_at, expires_at) VALUES (?, 'sandbox', ?, 'h', ?, 201, '{}', ?, ?)`),
				c.ID, key, state, created, expires); err != nil {
				t.Fatal(err)
			}
		}
		if resp, err := db.IdempotentResponse(ctx, a, "legacy"); err != nil || resp == nil || !resp.Unanswered {
			t.Fatalf("before the upgrade the key left in flight reads %+v %v, want unanswered (the retry's 500)", resp, err)
		}
		if err := sqldb.RunMigrationUp(db, string(db.Dialect())+"/"+earlierReleasesMigration); err != nil {
			t.Fatal(err)
		}
		if resp, err := db.IdempotentResponse(ctx, a, "legacy"); err != nil || resp != nil {
			t.Errorf("after the upgrade the key left in flight reads %+v %v, want none (the retry runs)", resp, err)
		}
		if resp, err := db.IdempotentResponse(ctx, a, "answered"); err != nil || resp == nil || resp.Status != 201 {
			t.Errorf("an answered key after the upgrade: %+v %v", resp, err)
		}
		if resp, err := db.IdempotentResponse(ctx, a, "unanswered"); err != nil || resp == nil || !resp.Unanswered {
			t.Errorf("an unanswered key after the upgrade: %+v %v", resp, err)
		}
	})
}

// Those releases stored a boleto's expires_at as the instant it fell due:
// a first bill's, due hours after the charge, expired mid-day, with no end
// of day and no grace. After the upgrade it is payable through its last
// payable day and the company's grace, as every boleto this release
// issues; the boletos this release wrote keep their expiry.
func TestUpgradeMovesTheEarliestBoletoExpiries(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		r := chargedBoleto(t, db)
		other := chargedBoleto(t, db) // another company's boleto, as this release wrote it
		kept := other.unpaid(0).ExpiresAt
		bill, boleto := r.bill(0), r.unpaid(0)
		due := bill.DueDate
		if due.Equal(parcela.SaoPauloDate(due)) {
			t.Fatalf("the first bill falls due at %v, a midnight: the test needs a mid-day due instant", due)
		}
		// The row as the earliest releases wrote it: expiring at its due instant.
		writeAsEarlier(t, db, `UPDATE payments SET expires_at = ? WHERE id = ?`, due.UnixMilli(), boleto.ID)
		for _, company := range []string{r.a.CompanyID, other.a.CompanyID} {
			if err := sqldb.RunBoletoExpiryMigration(db, company); err != nil {
				t.Fatal(err)
			}
		}
		grace := r.grace()
		if got, want := r.unpaid(0).ExpiresAt, parcela.BoletoExpiry(due, grace); !got.Equal(want) {
			t.Errorf("after the upgrade the boleto due %v expires at %v, want %v (its last payable day and grace)", due, got, want)
		}
		if got := other.unpaid(0).ExpiresAt; !got.Equal(kept) {
			t.Errorf("a boleto this release wrote moved from %v to %v", kept, got)
		}
		// What it cost the payer: paid at the bank at 20:00 of the due date.
		y, m, d := due.In(parcela.SaoPaulo).Date()
		evening := time.Date(y, m, d, 20, 0, 0, 0, parcela.SaoPaulo)
		r.clock.Set(evening.Add(time.Hour))
		if _, _, err := r.app.Payments.PayPayment(ctx, r.a, boleto.ID, parcela.Settlement{PaidAt: &evening}); err != nil {
			t.Errorf("the bank's notice of the boleto paid at %v, on its due date: %v", evening, err)
		}
	})
}

// chargedBoleto charges a fresh round's order with a boleto down payment.
func chargedBoleto(t *testing.T, db *sqldb.DB) *raceRound {
	t.Helper()
	ctx := context.Background()
	r := newRound(t, db, 3, true)
	offer, err := r.app.Catalog.Offer(ctx, r.a, r.order.OfferID)
	if err != nil {
		t.Fatal(err)
	}
	req := fromJSON[parcela.ChargeRequest](t, fmt.Sprintf(`{"payment_configuration_id": %q, "due_day": 10, "installments": 3,
		"payment": {"payment_method": "boleto"}, "signature": {"remote_ip": "203.0.113.7", "user_agent": "test"}}`, offer.PaymentConfigurations[0].ID))
	if r.order, err = r.app.Orders.ChargeOrder(ctx, r.a, r.order.ID, req); err != nil {
		t.Fatal(err)
	}
	return r
}

// A release before 00025 stored a boleto with grace expiring at its grace's
// last millisecond (23:59:59.999), and one such an instance issues during a
// rolling upgrade past 00025 keeps it. That expiry already holds the due
// day and the grace: 00028 moves it to the next midnight, as 00025 does,
// where it counted the grace again from it (a review), and the checkout
// handed the boleto over as payable past the bank's last day.
func TestUpgradeCountsTheGraceOnceOnABoletoOfARelease00025Missed(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		r := chargedBoleto(t, db)
		boleto := r.unpaid(0)
		headExpiry := boleto.ExpiresAt // BoletoExpiry(due, grace): a midnight
		// As the release before 00025 wrote it: EndOfDay(AddBusinessDays(last, grace)).
		writeAsEarlier(t, db, `UPDATE payments SET expires_at = ? WHERE id = ?`, headExpiry.Add(-time.Millisecond).UnixMilli(), boleto.ID)
		if err := sqldb.RunBoletoExpiryMigration(db, r.a.CompanyID); err != nil {
			t.Fatal(err)
		}
		got := r.unpaid(0).ExpiresAt
		if got.After(headExpiry) {
			t.Errorf("a boleto due %v whose bank's last day and grace end at %v was moved by 00028 to expire at %v (the grace counted twice)",
				r.bill(0).DueDate, headExpiry, got.In(parcela.SaoPaulo))
		}
		// What the payer meets the day after the bank's last day: the
		// checkout hands over that boleto as payable.
		bill := r.bill(0)
		r.clock.Set(headExpiry.Add(12 * time.Hour))
		if p, err := r.app.Checkout.IssuePayment(ctx, r.a.Environment, bill.ID, bill.AuthenticationCode, parcela.MethodBoleto); err == nil {
			t.Errorf("at %v, past the boleto's last day and grace, the checkout answers boleto %s as payable until %v",
				r.clock.Now(), p.ID, p.ExpiresAt.In(parcela.SaoPaulo))
		}
	})
}

// The earliest releases wrote a boleto first bill's effective_due_date as
// its due instant too: 00028 moves it with the payment's expiry. Left (a
// review), the bill answered effective_due_date mid-day, and a Pix asked
// for on its checkout before the due instant expired then, mid-day, beside
// a boleto payable through the end of the day and its grace.
func TestUpgradeMovesTheEarliestFirstBillsEffectiveDueDate(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		r := chargedBoleto(t, db)
		bill, boleto := r.bill(0), r.unpaid(0)
		due := bill.DueDate
		// The rows as the earliest releases wrote them.
		writeAsEarlier(t, db, `UPDATE payments SET expires_at = ? WHERE id = ?`, due.UnixMilli(), boleto.ID)
		writeAsEarlier(t, db, `UPDATE bills SET effective_due_date = ? WHERE id = ?`, due.UnixMilli(), bill.ID)
		if err := sqldb.RunBoletoExpiryMigration(db, r.a.CompanyID); err != nil {
			t.Fatal(err)
		}
		if got, want := r.bill(0).EffectiveDueDate, parcela.BoletoPayableUntil(due); !got.Equal(want) {
			t.Errorf("after the upgrade the boleto first bill's effective_due_date is %v, want %v as this release writes it", got, want)
		}
		r.clock.Set(due.Add(-time.Hour))
		pix, err := r.app.Checkout.IssuePayment(ctx, r.a.Environment, bill.ID, bill.AuthenticationCode, parcela.MethodPix)
		if err != nil {
			t.Fatal(err)
		}
		if want := parcela.ExpiryAfter(parcela.BoletoPayableUntil(due)); !pix.ExpiresAt.Equal(want) {
			t.Errorf("a Pix asked for on the checkout at %v expires at %v, want %v (the boleto beside it is payable through %v)",
				r.clock.Now(), pix.ExpiresAt, want, r.unpaid(0).ExpiresAt)
		}
	})
}

// The earliest releases stored an installment's boleto as expiring at its
// bill's effective due date (23:59:59.999), which 00025 (run before 00028)
// moves to the next midnight: 00028 gives it the company's grace, as every
// boleto this release issues has (a review: it passed over it).
func TestUpgradeGivesTheEarliestInstallmentBoletosTheirGrace(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		r.activate()
		bill, boleto := r.bill(1), r.unpaid(1)
		writeAsEarlier(t, db, `UPDATE payments SET expires_at = ? WHERE id = ?`, bill.EffectiveDueDate.UnixMilli(), boleto.ID)
		if err := sqldb.RunMigrationUp(db, "00025_boleto_expiry_after_its_last_day.sql"); err != nil {
			t.Fatal(err)
		}
		if err := sqldb.RunBoletoExpiryMigration(db, r.a.CompanyID); err != nil {
			t.Fatal(err)
		}
		grace := r.grace()
		if got, want := r.unpaid(1).ExpiresAt, parcela.BoletoExpiry(bill.DueDate, grace); !got.Equal(want) {
			t.Errorf("an earliest release's installment boleto due %v expires at %v after 00025 and 00028, want %v (its last payable day and grace)",
				bill.DueDate, got, want)
		}
	})
}

// An earliest release's on-time installment boleto
// (expiring at its bill's effective due date, 23:59:59.999) that 00025
// missed, issued by an instance still serving during the upgrade, moves by
// 00028 to the midnight after it and gets the company's grace at once, as
// one 00025 caught does (a review: it got no grace, and a second run gave
// it); a second run changes nothing.
func TestUpgradeGivesAnInstallmentBoleto00025MissedItsGraceAtOnce(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		r := newRound(t, db, 3, false)
		r.activate()
		bill, boleto := r.bill(1), r.unpaid(1)
		writeAsEarlier(t, db, `UPDATE payments SET expires_at = ? WHERE id = ?`, bill.EffectiveDueDate.UnixMilli(), boleto.ID)
		grace := r.grace()
		if grace == 0 {
			t.Fatal("the test needs a company with a grace")
		}
		if err := sqldb.RunBoletoExpiryMigration(db, r.a.CompanyID); err != nil {
			t.Fatal(err)
		}
		once := r.unpaid(1).ExpiresAt
		if err := sqldb.RunBoletoExpiryMigration(db, r.a.CompanyID); err != nil {
			t.Fatal(err)
		}
		twice := r.unpaid(1).ExpiresAt
		if !twice.Equal(once) {
			t.Errorf("00028 is not idempotent: one run left the installment boleto due %v at %v, a second moved it to %v",
				bill.DueDate, once.In(parcela.SaoPaulo), twice.In(parcela.SaoPaulo))
		}
		if want := parcela.BoletoExpiry(bill.DueDate, grace); !once.Equal(want) {
			t.Errorf("an earliest release's installment boleto 00025 missed expires at %v after 00028, want %v (its last payable day and grace, as when 00025 moved it)",
				once.In(parcela.SaoPaulo), want.In(parcela.SaoPaulo))
		}
	})
}

// The earliest releases counted 31 December as a business
// day (5833632 made it a day banks do not settle). An installment charged
// in November 2026 with due_day 31 fell due on Thursday 31 December
// 23:59:59.999, its effective_due_date that instant too, and its boleto
// expired then; 00025 moved it to 1 January 00:00. This release writes that
// boleto payable through Monday 4 January (1 January a holiday, then the
// weekend), expiring on the 5th without grace: 00028 leaves it expiring on
// New Year's Day, and the bank's notice of the payment made on the 4th,
// the first day the bank took it, is refused.
func TestUpgradeMovesTheEarliestInstallmentBoletoDueOn31December(t *testing.T) {
	t.Parallel()
	sqldbtest.Each(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		r := newRound(t, db, 3, false)
		r.activate()
		bill, boleto := r.bill(1), r.unpaid(1)
		due := time.Date(2026, 12, 31, 23, 59, 59, 999_000_000, parcela.SaoPaulo)
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`UPDATE companies SET boleto_grace_business_days = 0 WHERE id = ?`, []any{r.a.CompanyID}},
			// The rows as the earliest release wrote them.
			{`UPDATE bills SET due_date = ?, effective_due_date = ? WHERE id = ?`, []any{due.UnixMilli(), due.UnixMilli(), bill.ID}},
			{`UPDATE payments SET expires_at = ?, created_at = ? WHERE id = ?`, []any{due.UnixMilli(), raceStart.UnixMilli(), boleto.ID}},
		} {
			if _, err := db.SQLDB().ExecContext(ctx, sqldb.Rebind(db, q.sql), q.args...); err != nil {
				t.Fatal(err)
			}
		}
		if err := sqldb.RunMigrationUp(db, "00025_boleto_expiry_after_its_last_day.sql"); err != nil {
			t.Fatal(err)
		}
		if err := sqldb.RunBoletoExpiryMigration(db, r.a.CompanyID); err != nil {
			t.Fatal(err)
		}
		if got, want := r.unpaid(1).ExpiresAt, parcela.BoletoExpiry(due, 0); !got.Equal(want) {
			t.Errorf("after the upgrade the earliest installment boleto due %v expires at %v, want %v as this release writes it (payable through Monday 4 January)",
				due, got.In(parcela.SaoPaulo), want.In(parcela.SaoPaulo))
		}
		if got, want := r.bill(1).EffectiveDueDate, parcela.EffectiveDueDate(due); !got.Equal(want) {
			t.Errorf("after the upgrade the installment due %v has effective_due_date %v, want %v as this release writes it (late from 1 January)",
				due, got.In(parcela.SaoPaulo), want.In(parcela.SaoPaulo))
		}
		paid := time.Date(2027, 1, 4, 15, 0, 0, 0, parcela.SaoPaulo)
		r.clock.Set(paid.Add(time.Hour))
		if _, _, err := r.app.Payments.PayPayment(ctx, r.a, boleto.ID, parcela.Settlement{PaidAt: &paid}); err != nil {
			t.Errorf("the bank's notice of the boleto due 31 December paid on Monday 4 January, its first business day: %v", err)
		}
	})
}

// writeAsEarlier runs one statement writing a row as an earlier release
// left it.
func writeAsEarlier(t *testing.T, db *sqldb.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.SQLDB().ExecContext(context.Background(), sqldb.Rebind(db, q), args...); err != nil {
		t.Fatal(err)
	}
}

// grace is the round's company's settlement grace in business days.
func (r *raceRound) grace() int {
	r.t.Helper()
	c, err := r.db.Company(r.ctx, r.a.CompanyID)
	if err != nil {
		r.t.Fatal(err)
	}
	return c.BoletoGraceBusinessDays
}
