-- +goose Up
-- The payer's pages. An order's page opens with its access code (orders
-- from before have none, and no page). A card payment keeps only its brand
-- and last four digits; refused attempts keep their reason in the
-- refused_reason columns the schema already has.
ALTER TABLE orders ADD COLUMN access_code TEXT NOT NULL DEFAULT '';
ALTER TABLE payments ADD COLUMN card_brand TEXT;
ALTER TABLE payments ADD COLUMN card_last_digits TEXT;

-- +goose Down
ALTER TABLE payments DROP COLUMN card_last_digits;
ALTER TABLE payments DROP COLUMN card_brand;
ALTER TABLE orders DROP COLUMN access_code;
