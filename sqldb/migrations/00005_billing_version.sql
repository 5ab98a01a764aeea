-- +goose Up
-- A billing's version moves with every change of the billing, its bills or
-- their payments: a change decided on one version applies only to it, so
-- two racing changes of one billing cannot both commit.
ALTER TABLE billings ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE billings DROP COLUMN version;
