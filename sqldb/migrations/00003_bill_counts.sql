-- +goose Up
-- Exact bill counts by company, environment, status and the UTC hour of the
-- due date, so that a listing's total_items costs the hours in its range
-- (at most 24 a day), not the bills in it. Listings filter on São Paulo
-- days, whose bounds are whole UTC hours, so hours count them exactly.
-- Each dialect's 00004 adds triggers that append a delta row for every
-- change to bills in the same transaction (appending, never updating, so
-- concurrent charges never wait on a shared counter row);
-- CompactBillCounts folds the deltas into bill_day_counts. A count is the
-- sum over both tables, exact in every snapshot.
CREATE TABLE bill_day_counts (
  company_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  status TEXT NOT NULL,
  due_hour BIGINT NOT NULL,
  bills BIGINT NOT NULL,
  PRIMARY KEY (company_id, environment, status, due_hour)
);
CREATE TABLE bill_count_deltas (
  company_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  status TEXT NOT NULL,
  due_hour BIGINT NOT NULL,
  delta BIGINT NOT NULL
);
CREATE INDEX bill_count_deltas_key ON bill_count_deltas (company_id, environment, status, due_hour);
INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
  SELECT company_id, environment, status, due_date - due_date % 3600000, COUNT(*) FROM bills
  GROUP BY company_id, environment, status, due_date - due_date % 3600000;

-- +goose Down
DROP TABLE bill_count_deltas;
DROP TABLE bill_day_counts;
