-- +goose Up
-- See 00003: every change to a bill's status or due day appends its deltas.
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

-- +goose Down
DROP TRIGGER bills_count_delete;
DROP TRIGGER bills_count_update;
DROP TRIGGER bills_count_insert;
