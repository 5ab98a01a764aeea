-- +goose NO TRANSACTION
-- +goose Up
-- As SQLite's 00021: bills_status_due holds every column a listing reads,
-- here after its key (INCLUDE), so a page is an index-only scan of it
-- wherever the visibility map marks the table's pages all-visible (the
-- bills of past months, which listings mostly read), and a heap read per
-- bill elsewhere, as before. Built CONCURRENTLY, outside a transaction, so
-- that instances already serving keep writing bills while it builds; each
-- step can run again after a failure midway.
DROP INDEX CONCURRENTLY IF EXISTS bills_status_due_covering;
CREATE INDEX CONCURRENTLY bills_status_due_covering ON bills (company_id, environment, status, due_date, id) INCLUDE (
  billing_id, order_id, number, bill_type, amount_cents, effective_due_date, disable_penalties_until, paid_at,
  authentication_code, down_payment_cents, registration_fee_cents, amortization_cents, interest_cents,
  created_at, updated_at);
DROP INDEX CONCURRENTLY IF EXISTS bills_status_due;
ALTER INDEX bills_status_due_covering RENAME TO bills_status_due;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS bills_status_due_narrow;
CREATE INDEX CONCURRENTLY bills_status_due_narrow ON bills (company_id, environment, status, due_date, id);
DROP INDEX CONCURRENTLY IF EXISTS bills_status_due;
ALTER INDEX bills_status_due_narrow RENAME TO bills_status_due;
