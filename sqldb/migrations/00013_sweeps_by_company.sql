-- +goose Up
-- The sweeps read each company's bills through bills_status_due (see
-- sweep.go), so open bills need no index of their own: one index fewer for
-- every bill a charge inserts.
DROP INDEX bills_open_due;

-- +goose Down
CREATE INDEX bills_open_due ON bills (effective_due_date) WHERE status = 'pending';
