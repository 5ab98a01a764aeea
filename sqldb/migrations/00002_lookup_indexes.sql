-- +goose Up
-- Reading an order's billings (every order read, charge and cancel) must not
-- scan billings: the partial unique index only serves original billings.
CREATE INDEX billings_order ON billings (order_id, created_at, id);

-- +goose Down
DROP INDEX billings_order;
