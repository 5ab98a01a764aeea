-- +goose Up
-- Rows the earliest releases left that this one reads otherwise (an audit
-- of upgrades from them; the PostgreSQL file of this number is the same
-- with a lock):
--
-- A canceled order kept its seat before seats were given back (releaseSeat):
-- an offer carried over stayed sold out with fewer live orders than seats,
-- and a smaller limit was refused for seats its canceled orders held. Every
-- limited offer's seats_taken is counted again as releaseSeat keeps it.
UPDATE offers SET seats_taken = (SELECT COUNT(*) FROM billings bl JOIN orders o ON o.id = bl.order_id
	WHERE o.offer_id = offers.id AND bl.origin_billing_id IS NULL AND o.status <> 'canceled')
WHERE seats IS NOT NULL;

-- An Idempotency-Key was claimed 'in_flight' before its request ran, and a
-- process killed meanwhile left it so, whether or not the request's write
-- had committed; those releases ran the request again two minutes later.
-- This one reads any key not 'done' as a committed, unanswered PATCH or
-- DELETE, and a POST has nothing to read back: every retry of that order
-- or charge was answered 500 for the key's 24 hours. No server of this
-- release is running them (they stop before it migrates), so the retry
-- runs, as it did then. No release since writes the state.
DELETE FROM idempotency_keys WHERE state = 'in_flight';

-- +goose Down
-- Nothing: the counts are right for every release, and the keys gone.
