-- +goose Up
-- SQLite has one writer, so a charge's bills can count themselves in
-- bill_day_counts directly: no two writers ever wait on one count row,
-- which is what the deltas of 00004 avoid on PostgreSQL. Keyed by the
-- count's own key (WITHOUT ROWID), a charge's twelve monthly hours of one
-- company and status sit together in one or two pages, where twelve
-- deltas touched about fifteen pages of their index (WAL frames counted
-- per charge) and the compactor rewrote them again. bill_count_deltas
-- stays, empty, so the counts read the same statement on both engines.
-- Hours whose count falls to zero keep a row of zero, which sums to
-- nothing.
DROP TRIGGER bills_count_delete;
DROP TRIGGER bills_count_update;
DROP TRIGGER bills_count_insert;
CREATE TABLE bill_day_counts_keyed (
  company_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  status TEXT NOT NULL,
  due_hour BIGINT NOT NULL,
  bills BIGINT NOT NULL,
  PRIMARY KEY (company_id, environment, status, due_hour)
) WITHOUT ROWID;
INSERT INTO bill_day_counts_keyed (company_id, environment, status, due_hour, bills)
  SELECT company_id, environment, status, due_hour, SUM(n) FROM (
    SELECT company_id, environment, status, due_hour, bills AS n FROM bill_day_counts
    UNION ALL
    SELECT company_id, environment, status, due_hour, delta FROM bill_count_deltas
  ) GROUP BY company_id, environment, status, due_hour HAVING SUM(n) <> 0;
DELETE FROM bill_count_deltas;
DROP TABLE bill_day_counts;
ALTER TABLE bill_day_counts_keyed RENAME TO bill_day_counts;
-- +goose StatementBegin
CREATE TRIGGER bills_count_insert AFTER INSERT ON bills BEGIN
  INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
    VALUES (NEW.company_id, NEW.environment, NEW.status, NEW.due_date - NEW.due_date % 3600000, 1)
    ON CONFLICT (company_id, environment, status, due_hour) DO UPDATE SET bills = bills + excluded.bills;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER bills_count_update AFTER UPDATE OF status, due_date ON bills
WHEN OLD.status <> NEW.status OR OLD.due_date <> NEW.due_date BEGIN
  INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
    VALUES (OLD.company_id, OLD.environment, OLD.status, OLD.due_date - OLD.due_date % 3600000, -1),
           (NEW.company_id, NEW.environment, NEW.status, NEW.due_date - NEW.due_date % 3600000, 1)
    ON CONFLICT (company_id, environment, status, due_hour) DO UPDATE SET bills = bills + excluded.bills;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER bills_count_delete AFTER DELETE ON bills BEGIN
  INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
    VALUES (OLD.company_id, OLD.environment, OLD.status, OLD.due_date - OLD.due_date % 3600000, -1)
    ON CONFLICT (company_id, environment, status, due_hour) DO UPDATE SET bills = bills + excluded.bills;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER bills_count_delete;
DROP TRIGGER bills_count_update;
DROP TRIGGER bills_count_insert;
CREATE TABLE bill_day_counts_rowid (
  company_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  status TEXT NOT NULL,
  due_hour BIGINT NOT NULL,
  bills BIGINT NOT NULL,
  PRIMARY KEY (company_id, environment, status, due_hour)
);
INSERT INTO bill_day_counts_rowid SELECT company_id, environment, status, due_hour, bills FROM bill_day_counts WHERE bills <> 0;
DROP TABLE bill_day_counts;
ALTER TABLE bill_day_counts_rowid RENAME TO bill_day_counts;
-- +goose StatementBegin
CREATE TRIGGER bills_count_insert AFTER INSERT ON bills BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_hour, delta)
    VALUES (NEW.company_id, NEW.environment, NEW.status, NEW.due_date - NEW.due_date % 3600000, 1);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER bills_count_update AFTER UPDATE OF status, due_date ON bills
WHEN OLD.status <> NEW.status OR OLD.due_date <> NEW.due_date BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_hour, delta)
    VALUES (OLD.company_id, OLD.environment, OLD.status, OLD.due_date - OLD.due_date % 3600000, -1),
           (NEW.company_id, NEW.environment, NEW.status, NEW.due_date - NEW.due_date % 3600000, 1);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER bills_count_delete AFTER DELETE ON bills BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_hour, delta)
    VALUES (OLD.company_id, OLD.environment, OLD.status, OLD.due_date - OLD.due_date % 3600000, -1);
END;
-- +goose StatementEnd
