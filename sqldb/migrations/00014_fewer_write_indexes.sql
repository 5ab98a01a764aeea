-- +goose Up
-- Two indexes every charge writes and no request needs (docs/design.md):
-- a listing without a status merges the statuses' runs of bills_status_due
-- (sqldb/bill.go, pageBills), so bills need no index on the due date alone:
-- twelve index entries, and about as many leaf pages, fewer per 12-bill
-- charge;
DROP INDEX bills_due;
-- events are read by id (deliveries) and by entity (audits, events_entity);
-- nothing lists a company's events: fourteen entries fewer per charge.
DROP INDEX events_owner;

-- +goose Down
CREATE INDEX bills_due ON bills (company_id, environment, due_date, id);
CREATE INDEX events_owner ON events (company_id, environment, created_at);
