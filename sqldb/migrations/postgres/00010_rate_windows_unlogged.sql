-- +goose Up
-- Rate windows are counts of the current second: a crash that loses them
-- only resets a window. Unlogged, a count writes no WAL, so the upsert that
-- every rate-limited request runs commits without waiting for a WAL flush.
ALTER TABLE rate_windows SET UNLOGGED;

-- +goose Down
ALTER TABLE rate_windows SET LOGGED;
