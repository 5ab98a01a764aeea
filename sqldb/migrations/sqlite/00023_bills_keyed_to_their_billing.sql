-- +goose Up
-- PostgreSQL only (see its 00023): SQLite checks a key in well under a
-- microsecond, and changing one means rebuilding bills, its largest table.
SELECT 1;

-- +goose Down
SELECT 1;
