-- +goose Up
-- SQLite only (see its 00011): on PostgreSQL concurrent charges would
-- queue on shared count rows, so they keep appending deltas.
SELECT 1;

-- +goose Down
SELECT 1;
