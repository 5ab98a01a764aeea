-- +goose Up
-- PostgreSQL only (see its 00010): SQLite has one writer and no shared
-- counter, so it counts rate windows in each process.
SELECT 1;

-- +goose Down
SELECT 1;
