-- +goose Up
-- Every offer's seats sold, limited or not (sqldb/offer.go, UpdateOffer):
-- a PATCH giving an offer a seat limit counted its sales inside the
-- transaction, on SQLite's single writer, and one offer with 300,000 sales
-- held every company's writes for most of a second a PATCH (an audit).
-- Kept in the writer (takeSeat, releaseSeat), it is read instead. SQLite
-- only: on PostgreSQL the count holds only the offer's row, and a count
-- kept by every charge would queue an unlimited offer's charges on it.
ALTER TABLE offers ADD COLUMN sold INTEGER NOT NULL DEFAULT 0;
UPDATE offers SET sold = (SELECT COUNT(*) FROM billings bl JOIN orders o ON o.id = bl.order_id
	WHERE o.offer_id = offers.id AND bl.origin_billing_id IS NULL AND o.status <> 'canceled');

-- +goose Down
ALTER TABLE offers DROP COLUMN sold;
