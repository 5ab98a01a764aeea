-- +goose Up
-- See SQLite's 00022: the counts key on the day of the due date (from
-- 03:00 UTC, São Paulo's midnight without daylight saving time), not its
-- hour. About a second per million bills. The tables are locked before
-- anything is done to them, and the counts in the order a listing's count
-- reads them: an instance of an earlier release still serving waits (its
-- listings by due date then fail on the renamed column) instead of
-- holding one table while this waits for it, a deadlock that aborted this
-- migration in a review. Its compactor reads the deltas first and can
-- still deadlock with this; stop earlier releases before it (README).
LOCK TABLE bills IN SHARE MODE;
LOCK TABLE bill_day_counts, bill_count_deltas IN ACCESS EXCLUSIVE MODE;
DELETE FROM bill_count_deltas;
DELETE FROM bill_day_counts;
ALTER TABLE bill_count_deltas RENAME COLUMN due_hour TO due_day;
ALTER TABLE bill_day_counts RENAME COLUMN due_hour TO due_day;
INSERT INTO bill_day_counts (company_id, environment, status, due_day, bills)
  SELECT company_id, environment, status, due_date - ((due_date - 10800000) % 86400000 + 86400000) % 86400000, COUNT(*) FROM bills
  GROUP BY 1, 2, 3, 4;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bill_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_day, delta)
    SELECT company_id, environment, status, due_date - ((due_date - 10800000) % 86400000 + 86400000) % 86400000, COUNT(*) FROM added
    GROUP BY 1, 2, 3, 4;
  RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bill_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_day, delta)
    SELECT company_id, environment, status, due_date - ((due_date - 10800000) % 86400000 + 86400000) % 86400000, -COUNT(*) FROM removed
    GROUP BY 1, 2, 3, 4;
  RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bill_count_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_day, delta)
    SELECT b.company_id, b.environment, b.status, b.due_day, SUM(b.delta) FROM (
      SELECT o.company_id, o.environment, o.status, o.due_date - ((o.due_date - 10800000) % 86400000 + 86400000) % 86400000 AS due_day, -1 AS delta
        FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status <> n.status OR o.due_date <> n.due_date
      UNION ALL
      SELECT n.company_id, n.environment, n.status, n.due_date - ((n.due_date - 10800000) % 86400000 + 86400000) % 86400000, 1
        FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status <> n.status OR o.due_date <> n.due_date
    ) b GROUP BY b.company_id, b.environment, b.status, b.due_day HAVING SUM(b.delta) <> 0;
  RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
LOCK TABLE bills IN SHARE MODE;
LOCK TABLE bill_day_counts, bill_count_deltas IN ACCESS EXCLUSIVE MODE;
DELETE FROM bill_count_deltas;
DELETE FROM bill_day_counts;
ALTER TABLE bill_count_deltas RENAME COLUMN due_day TO due_hour;
ALTER TABLE bill_day_counts RENAME COLUMN due_day TO due_hour;
INSERT INTO bill_day_counts (company_id, environment, status, due_hour, bills)
  SELECT company_id, environment, status, due_date - due_date % 3600000, COUNT(*) FROM bills
  GROUP BY 1, 2, 3, 4;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bill_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_hour, delta)
    SELECT company_id, environment, status, due_date - due_date % 3600000, COUNT(*) FROM added
    GROUP BY company_id, environment, status, due_date - due_date % 3600000;
  RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bill_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_hour, delta)
    SELECT company_id, environment, status, due_date - due_date % 3600000, -COUNT(*) FROM removed
    GROUP BY company_id, environment, status, due_date - due_date % 3600000;
  RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bill_count_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_hour, delta)
    SELECT b.company_id, b.environment, b.status, b.due_hour, SUM(b.delta) FROM (
      SELECT o.company_id, o.environment, o.status, o.due_date - o.due_date % 3600000 AS due_hour, -1 AS delta
        FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status <> n.status OR o.due_date <> n.due_date
      UNION ALL
      SELECT n.company_id, n.environment, n.status, n.due_date - n.due_date % 3600000, 1
        FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status <> n.status OR o.due_date <> n.due_date
    ) b GROUP BY b.company_id, b.environment, b.status, b.due_hour HAVING SUM(b.delta) <> 0;
  RETURN NULL;
END $$;
-- +goose StatementEnd
