-- +goose Up
-- A listing by status (and the merge of every status's run when none is
-- named) reads its page in bills_status_due order. Bills are stored in the
-- order they were charged, so at a million bills each bill of a page was a
-- leaf of its own to read from the table. Holding every column a listing
-- reads in the index itself, the page is a few adjacent leaves of it
-- (docs/design.md, "A bill listing reads its page from one index").
-- PostgreSQL's 00021 does the same with INCLUDE.
DROP INDEX bills_status_due;
CREATE INDEX bills_status_due ON bills (company_id, environment, status, due_date, id,
  billing_id, order_id, number, bill_type, amount_cents, effective_due_date, disable_penalties_until, paid_at,
  authentication_code, down_payment_cents, registration_fee_cents, amortization_cents, interest_cents,
  created_at, updated_at);

-- +goose Down
DROP INDEX bills_status_due;
CREATE INDEX bills_status_due ON bills (company_id, environment, status, due_date, id);
