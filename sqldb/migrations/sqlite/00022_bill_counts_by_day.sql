-- +goose Up
-- The listing's counts key on the day of the due date, not its hour: a
-- down payment falls due at its charge's instant, so at a million bills
-- every hour of a listing's range had a count row, 1,440 rows to sum for
-- sixty days. A day begins at 03:00 UTC, São Paulo's midnight without
-- daylight saving time; a filter's bound that is not such a midnight has
-- the rest of its day counted from the bills (sqldb/bill_count.go, and
-- docs/design.md, "Bill counts by day"). The same expression is dueDaySQL
-- there; % truncates, so the outer one makes the day of an instant before
-- 1970 the one before it.
DROP TRIGGER bills_count_delete;
DROP TRIGGER bills_count_update;
DROP TRIGGER bills_count_insert;
DELETE FROM bill_count_deltas;
DELETE FROM bill_day_counts;
ALTER TABLE bill_count_deltas RENAME COLUMN due_hour TO due_day;
ALTER TABLE bill_day_counts RENAME COLUMN due_hour TO due_day;
INSERT INTO bill_day_counts (company_id, environment, status, due_day, bills)
  SELECT company_id, environment, status, due_date - ((due_date - 10800000) % 86400000 + 86400000) % 86400000, COUNT(*) FROM bills
  GROUP BY 1, 2, 3, 4;
-- +goose StatementBegin
CREATE TRIGGER bills_count_insert AFTER INSERT ON bills BEGIN
  INSERT INTO bill_day_counts (company_id, environment, status, due_day, bills)
    VALUES (NEW.company_id, NEW.environment, NEW.status, NEW.due_date - ((NEW.due_date - 10800000) % 86400000 + 86400000) % 86400000, 1)
    ON CONFLICT (company_id, environment, status, due_day) DO UPDATE SET bills = bills + excluded.bills;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER bills_count_update AFTER UPDATE OF status, due_date ON bills
WHEN OLD.status <> NEW.status OR OLD.due_date <> NEW.due_date BEGIN
  INSERT INTO bill_day_counts (company_id, environment, status, due_day, bills)
    VALUES (OLD.company_id, OLD.environment, OLD.status, OLD.due_date - ((OLD.due_date - 10800000) % 86400000 + 86400000) % 86400000, -1),
           (NEW.company_id, NEW.environment, NEW.status, NEW.due_date - ((NEW.due_date - 10800000) % 86400000 + 86400000) % 86400000, 1)
    ON CONFLICT (company_id, environment, status, due_day) DO UPDATE SET bills = bills + excluded.bills;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER bills_count_delete AFTER DELETE ON bills BEGIN
  INSERT INTO bill_day_counts (company_id, environment, status, due_day, bills)
    VALUES (OLD.company_id, OLD.environment, OLD.status, OLD.due_date - ((OLD.due_date - 10800000) % 86400000 + 86400000) % 86400000, -1)
    ON CONFLICT (company_id, environment, status, due_day) DO UPDATE SET bills = bills + excluded.bills;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER bills_count_delete;
DROP TRIGGER bills_count_update;
DROP TRIGGER bills_count_insert;
DELETE FROM bill_count_deltas;
DELETE FROM bill_day_counts;
ALTER TABLE bill_count_deltas RENAME COLUMN due_day TO due_hour;
ALTER TABLE bill_day_counts RENAME COLUMN due_day TO due_hour;
INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
  SELECT company_id, environment, status, due_date - due_date % 3600000, COUNT(*) FROM bills
  GROUP BY 1, 2, 3, 4;
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
