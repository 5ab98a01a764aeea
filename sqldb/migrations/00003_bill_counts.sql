-- +goose Up
-- Exact bill counts by company, environment, status and due day, so that a
-- listing's total_items costs the days in its range, not the bills in it.
-- Each dialect's 00004 adds triggers that append a delta row for every
-- change to bills in the same transaction (appending, never updating, so
-- concurrent charges never wait on a shared counter row);
-- CompactBillCounts folds the deltas into bill_day_counts. A count is the
-- sum over both tables, exact in every snapshot.
CREATE TABLE bill_day_counts (
  company_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  status TEXT NOT NULL,
  due_date BIGINT NOT NULL,
  bills BIGINT NOT NULL,
  PRIMARY KEY (company_id, environment, status, due_date)
);
CREATE TABLE bill_count_deltas (
  company_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  status TEXT NOT NULL,
  due_date BIGINT NOT NULL,
  delta BIGINT NOT NULL
);
CREATE INDEX bill_count_deltas_key ON bill_count_deltas (company_id, environment, status, due_date);
INSERT INTO bill_day_counts (company_id, environment, status, due_date, bills)
  SELECT company_id, environment, status, due_date, COUNT(*) FROM bills GROUP BY company_id, environment, status, due_date;

-- +goose Down
DROP TABLE bill_count_deltas;
DROP TABLE bill_day_counts;
