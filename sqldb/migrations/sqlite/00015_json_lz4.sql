-- +goose Up
-- PostgreSQL only (see its 00015): SQLite does not compress values.
SELECT 1;

-- +goose Down
SELECT 1;
