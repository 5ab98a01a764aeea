-- +goose Up
-- A payment is recorded as an intent, and committed, before the provider is
-- called; the change that stores the payment deletes its intent, so the
-- rows left are intents still issuing, being voided, or voided. bill_id
-- references nothing: a charge's first bill is stored with its payment.
CREATE TABLE payment_intents (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  bill_id TEXT NOT NULL,
  payment_method TEXT NOT NULL,
  amount_cents BIGINT NOT NULL,
  nosso_numero BIGINT NOT NULL,
  state TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX payment_intents_open ON payment_intents (updated_at) WHERE state IN ('issuing', 'voiding');

-- A row a sweep failed on waits until next_attempt_at; failures counts its
-- failures in a row, for the backoff. A success deletes the record.
CREATE TABLE sweep_failures (
  sweep TEXT NOT NULL,
  row_id TEXT NOT NULL,
  company_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  bill_id TEXT NOT NULL,
  failures INTEGER NOT NULL,
  next_attempt_at BIGINT NOT NULL,
  failed_at BIGINT NOT NULL,
  PRIMARY KEY (sweep, row_id)
);

-- +goose Down
DROP TABLE sweep_failures;
DROP TABLE payment_intents;
