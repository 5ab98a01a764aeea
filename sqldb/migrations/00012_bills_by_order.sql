-- +goose Up
-- A billing's bills are read through its order's index (bills_order): the
-- billing knows its order, and an order has few bills. One index fewer for
-- every bill a charge inserts.
DROP INDEX bills_billing;

-- +goose Down
CREATE INDEX bills_billing ON bills (billing_id, number);
