-- +goose Up
-- A product's version moves with every PATCH: a PATCH writes every field,
-- so one decided on an older version would put back what another changed.
ALTER TABLE products ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE products DROP COLUMN version;
