-- +goose Up
-- See 00003: every statement that changes bills appends its deltas, one row
-- per (company, environment, status, due day) it touched. Statement-level
-- triggers with transition tables keep a 12-bill insert or a sweep's
-- set-based update to one extra INSERT.
-- +goose StatementBegin
CREATE FUNCTION bill_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_hour, delta)
    SELECT company_id, environment, status, due_date - due_date % 3600000, COUNT(*) FROM added
    GROUP BY company_id, environment, status, due_date - due_date % 3600000;
  RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION bill_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bill_count_deltas (company_id, environment, status, due_hour, delta)
    SELECT company_id, environment, status, due_date - due_date % 3600000, -COUNT(*) FROM removed
    GROUP BY company_id, environment, status, due_date - due_date % 3600000;
  RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION bill_count_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER bills_count_insert AFTER INSERT ON bills REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION bill_count_added();
CREATE TRIGGER bills_count_delete AFTER DELETE ON bills REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION bill_count_removed();
CREATE TRIGGER bills_count_update AFTER UPDATE ON bills REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION bill_count_changed();

-- +goose Down
DROP TRIGGER bills_count_update ON bills;
DROP TRIGGER bills_count_delete ON bills;
DROP TRIGGER bills_count_insert ON bills;
DROP FUNCTION bill_count_changed();
DROP FUNCTION bill_count_removed();
DROP FUNCTION bill_count_added();
