-- +goose Up
-- SQLite only (see its 00026): here a PATCH's count of an offer's sales
-- holds only the offer's row, and a count kept by every charge would queue
-- an unlimited offer's charges on that row.
SELECT 1;

-- +goose Down
SELECT 1;
