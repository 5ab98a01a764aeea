package sqldb

import (
	"context"
	"database/sql"
	"time"

	"parcela"
)

// Apply writes a decided change in one transaction. Every move is a guarded
// UPDATE: the row must still be in the status (and, for a billing, at the
// version) the change was decided on. If one is not, nothing is kept and
// the caller gets a *parcela.Conflict, to read again and decide again.
//
// Rows are locked in one order (billings, the order, bills, payments, the
// intents of new payments, the offer, its product), so racing changes
// queue on the billing's row instead of deadlocking.
func (db *DB) Apply(ctx context.Context, c *parcela.Change) error {
	if c == nil {
		return nil
	}
	return failed("apply change", db.inTxOf(ctx, c.Owner, func(tx *Tx) error {
		p := tx.pipeline()
		for _, m := range c.Billings {
			b := m.Billing
			if err := p.guarded(ctx, "billing", b.ID, `UPDATE billings SET status = ?, cancelation_reason = ?, finished_at = ?, updated_at = ?, version = version + 1
				WHERE id = ? AND status = ? AND version = ?`,
				b.Status, b.CancelationReason, msPtr(b.FinishedAt), ms64(b.UpdatedAt), b.ID, m.From, m.Version); err != nil {
				return err
			}
		}
		if m := c.Order; m != nil {
			o := m.Order
			if err := p.guarded(ctx, "order", o.ID, `UPDATE orders SET status = ?, cancelation_reason = ?, updated_at = ? WHERE id = ? AND status = ?`,
				o.Status, o.CancelationReason, ms64(o.UpdatedAt), o.ID, m.From); err != nil {
				return err
			}
		}
		for _, m := range c.Bills {
			b := m.Bill
			if err := p.guarded(ctx, "bill", b.ID, `UPDATE bills SET status = ?, paid_at = ?, disable_penalties_until = ?, updated_at = ? WHERE id = ? AND status = ?`,
				b.Status, msPtr(b.PaidAt), msPtr(b.DisablePenaltiesUntil), ms64(b.UpdatedAt), b.ID, m.From); err != nil {
				return err
			}
		}
		for _, m := range c.Payments {
			pay := m.Payment
			if err := p.guarded(ctx, "payment", pay.ID, `UPDATE payments SET status = ?, paid_amount_cents = ?, paid_at = ?, updated_at = ? WHERE id = ? AND status = ?`,
				pay.Status, pay.PaidAmountCents, msPtr(pay.PaidAt), ms64(pay.UpdatedAt), pay.ID, m.From); err != nil {
				return err
			}
		}
		if c.NewBilling != nil {
			if err := insertBilling(ctx, p, c.NewBilling); err != nil {
				return err
			}
		}
		if err := completeIntents(ctx, p, c.NewPayments); err != nil {
			return err
		}
		if err := insertPayments(ctx, p, c.NewPayments); err != nil {
			return err
		}
		if c.Notice != nil {
			if err := insertNotice(ctx, p, c.Notice); err != nil {
				return err
			}
		}
		if c.SeatOf != nil {
			if err := takeSeat(ctx, p, tx.db, c.SeatOf, c.At); err != nil {
				return err
			}
		}
		// The offer is locked last, as a charge's seat locks it.
		if m := c.Order; m != nil && m.From == parcela.OrderInProgress && m.Order.Status == parcela.OrderCanceled {
			if err := releaseSeat(ctx, p, tx.db, m.Order.OfferID); err != nil {
				return err
			}
		}
		// Queued with the change, so a payment is voided at its provider
		// exactly when its cancelation committed.
		tx.enqueueVoids(c.Voids)
		return writeEvents(ctx, p, c.Events)
	}))
}

// releaseSeat gives back the seat of a charged order canceled (by the
// company, or expired unpaid): seats_taken counts the orders charged and
// not canceled, and a seat kept by every order left unpaid sold the offer
// out to no one. An offer without a limit keeps no count, but its row is
// locked all the same: a PATCH giving it a limit locks the row and counts
// the orders not canceled (UpdateOffer), so the cancelation waits for the
// PATCH and then finds the limit it set and its order counted, or the
// PATCH waits for it and counts without its order. Conditioned on the
// limit, PostgreSQL skipped a row it read without one and never waited:
// a PATCH in flight counted the canceled order, and its seat was taken
// for ever. A cancelation is rare: it holds the charges of the offer up
// for a moment only.
//
// On SQLite it also counts the offer's sales, limited or not (offers.sold,
// read by UpdateOffer).
func releaseSeat(ctx context.Context, p *pipeline, db *DB, offerID string) error {
	sold := ""
	if db.dialect == SQLite {
		// Unclamped: a count read by its differences (UpdateOffer), whose
		// every sale and cancelation must move it by one; held at 0 on an
		// offer whose rows were written past takeSeat, a cancelation
		// between a PATCH's count and its write lost a seat (a review).
		sold = `, sold = sold - 1`
	}
	return p.exec(ctx, nil, `UPDATE offers SET seats_taken = CASE WHEN seats IS NOT NULL AND seats_taken > 0 THEN seats_taken - 1 ELSE seats_taken END`+sold+`
		WHERE id = ?`, offerID)
}

// takeSeat counts a sold seat on an offer with a seat limit; none left is a
// conflict (the charge reads the offer again and finds it sold out). The
// offer must still be sellable as the charge decided at its time: a PATCH
// that disabled it or its product (or moved its expiry) since it was read
// makes a conflict too, so no charge commits after the PATCH that stopped
// sales answered. The product's row is share-locked as the offer's is (in
// the same statement where the offer has no limit): a product PATCH locks
// it first (UpdateProduct), so one in flight is waited for and then read
// as it committed.
// Offers without a limit (most) keep no count, so their charges never
// queue on the offer's row: PostgreSQL would hold its lock from the UPDATE
// to the commit. They only share-lock it, so that a PATCH (which locks it
// for update) waits for them, and they for it: one giving the offer a
// limit then counts every seat (UpdateOffer). SQLite serializes writes
// anyway, and there every offer's sales are counted (offers.sold, read by
// UpdateOffer).
func takeSeat(ctx context.Context, p *pipeline, db *DB, offer *parcela.Offer, at time.Time) error {
	if db.dialect == SQLite {
		if err := p.exec(ctx, nil, `UPDATE offers SET sold = sold + 1 WHERE id = ?`, offer.ID); err != nil {
			return err
		}
	}
	if offer.Seats != nil {
		if err := p.guarded(ctx, "offer", offer.ID, `UPDATE offers SET seats_taken = seats_taken + 1
			WHERE id = ? AND seats_taken < seats AND availability = ? AND (expires_at IS NULL OR expires_at > ?)`,
			offer.ID, "enabled", ms64(at)); err != nil {
			return err
		}
		return p.queryRow(ctx, func(row rowScanner) error {
			var product string
			if err := row.Scan(&product); err != nil {
				return err
			}
			return productOnSale(offer, product)
		}, `SELECT availability FROM products WHERE id = ?`+db.lockRows("SHARE"), offer.ProductID)
	}
	return p.queryRow(ctx, func(row rowScanner) error {
		var seats, expires sql.NullInt64
		var availability, product string
		if err := row.Scan(&seats, &availability, &expires, &product); err != nil {
			return err
		}
		if seats.Valid || availability != "enabled" || (expires.Valid && expires.Int64 <= ms64(at)) {
			// A PATCH gave the offer a limit, or stopped its sales, since
			// it was read.
			return &parcela.Conflict{Entity: "offer", ID: offer.ID}
		}
		return productOnSale(offer, product)
	}, `SELECT o.seats, o.availability, o.expires_at, p.availability FROM offers o JOIN products p ON p.id = o.product_id
		WHERE o.id = ?`+db.lockRows("SHARE"), offer.ID)
}

// productOnSale is a conflict when a PATCH disabled offer's product since
// the charge read it (availability, as read at commit).
func productOnSale(offer *parcela.Offer, availability string) error {
	if availability != "enabled" {
		return &parcela.Conflict{Entity: "product", ID: offer.ProductID}
	}
	return nil
}
