-- +goose Up
-- The key of the payer's form an order was created by on its offer page:
-- the same form sent again (a double click, the Back button, a retry after
-- its charge failed) finds that order, on any instance, rather than create
-- another. The API's orders have none, and the index holds only the pages'.
ALTER TABLE orders ADD COLUMN form_key TEXT;
CREATE UNIQUE INDEX orders_form_key ON orders (company_id, environment, form_key) WHERE form_key IS NOT NULL;

-- +goose Down
DROP INDEX orders_form_key;
ALTER TABLE orders DROP COLUMN form_key;
