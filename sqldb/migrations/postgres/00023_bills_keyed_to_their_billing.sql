-- +goose Up
-- A bill's billing, order, company and environment are one key to its
-- billing's row, instead of three keys (billing, order, company) checked
-- one by one: a 12-bill charge makes 12 checks of the billing's row
-- instead of 36 of three rows, each an SPI query locking its parent. The
-- billing's own keys still reach its order and company, so nothing the
-- three keys guarded goes unguarded, and a bill can no longer name an
-- order, company or environment other than its billing's. About a second
-- per million bills, with the four tables locked (dropping a key locks
-- the table it names too), all at once before anything is done: an
-- instance still writing can still deadlock with it, since a charge
-- writes these tables in no one order; PostgreSQL then aborts this
-- migration whole, and Migrate runs it again (migrateUp). Stop earlier
-- releases first (README).
LOCK TABLE companies, orders, billings, bills IN ACCESS EXCLUSIVE MODE;
ALTER TABLE billings ADD CONSTRAINT billings_sale_key UNIQUE (id, order_id, company_id, environment);
ALTER TABLE bills ADD CONSTRAINT bills_billing_sale_fkey FOREIGN KEY (billing_id, order_id, company_id, environment)
  REFERENCES billings (id, order_id, company_id, environment);
ALTER TABLE bills DROP CONSTRAINT bills_billing_id_fkey, DROP CONSTRAINT bills_order_id_fkey, DROP CONSTRAINT bills_company_id_fkey;

-- +goose Down
LOCK TABLE companies, orders, billings, bills IN ACCESS EXCLUSIVE MODE;
ALTER TABLE bills ADD CONSTRAINT bills_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies (id);
ALTER TABLE bills ADD CONSTRAINT bills_order_id_fkey FOREIGN KEY (order_id) REFERENCES orders (id);
ALTER TABLE bills ADD CONSTRAINT bills_billing_id_fkey FOREIGN KEY (billing_id) REFERENCES billings (id);
ALTER TABLE bills DROP CONSTRAINT bills_billing_sale_fkey;
ALTER TABLE billings DROP CONSTRAINT billings_sale_key;
