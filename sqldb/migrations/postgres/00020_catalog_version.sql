-- +goose Up
-- A company's catalog version moves with every change to what an offer's
-- page and its orders read of the offer (the company and its address, its
-- products, offers and payment configurations, and the reference rows they
-- name), so that a kept copy of an offer is exact while the version it was
-- read at is still the company's (sqldb/offer_cache.go). The count of an
-- offer's sold seats is left out: it moves with sales and is read fresh.
-- Triggers, not the code that writes, keep it, so that a write from
-- another instance or by hand moves it too. Each dialect writes its own.
-- Only a catalog change updates a company's row, in a column no key
-- holds: the charges' key checks (FOR KEY SHARE) never wait on it.
ALTER TABLE companies ADD COLUMN catalog_version BIGINT NOT NULL DEFAULT 0;
-- The version only grows, even when a hand sets it: a version seen again
-- would serve a copy read before the changes in between.
-- +goose StatementBegin
CREATE FUNCTION companies_catalog_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.catalog_version <= OLD.catalog_version THEN
    NEW.catalog_version := OLD.catalog_version + 1;
  END IF;
  RETURN NEW;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION catalog_changed_by_company() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE companies SET catalog_version = catalog_version + 1 WHERE id = NEW.company_id;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE companies SET catalog_version = catalog_version + 1 WHERE id = OLD.company_id;
  ELSE
    UPDATE companies SET catalog_version = catalog_version + 1 WHERE id IN (OLD.company_id, NEW.company_id);
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION catalog_changed_by_offer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE companies SET catalog_version = catalog_version + 1 WHERE id = (SELECT company_id FROM offers WHERE id = NEW.offer_id);
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE companies SET catalog_version = catalog_version + 1 WHERE id = (SELECT company_id FROM offers WHERE id = OLD.offer_id);
  ELSE
    UPDATE companies SET catalog_version = catalog_version + 1
      WHERE id IN (SELECT company_id FROM offers WHERE id IN (OLD.offer_id, NEW.offer_id));
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION catalog_changed_by_address() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE companies SET catalog_version = catalog_version + 1 WHERE address_id = OLD.id;
  IF TG_OP = 'UPDATE' AND NEW.id <> OLD.id THEN
    UPDATE companies SET catalog_version = catalog_version + 1 WHERE address_id = NEW.id;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION catalog_changed_for_all() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE companies SET catalog_version = catalog_version + 1;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER companies_catalog_update BEFORE UPDATE ON companies
  FOR EACH ROW EXECUTE FUNCTION companies_catalog_version();
CREATE TRIGGER products_catalog AFTER INSERT OR UPDATE OR DELETE ON products
  FOR EACH ROW EXECUTE FUNCTION catalog_changed_by_company();
CREATE TRIGGER offers_catalog AFTER INSERT OR DELETE ON offers
  FOR EACH ROW EXECUTE FUNCTION catalog_changed_by_company();
-- Every column but seats_taken, whatever columns offers gains.
CREATE TRIGGER offers_catalog_update AFTER UPDATE ON offers
  FOR EACH ROW WHEN ((to_jsonb(NEW) - 'seats_taken') IS DISTINCT FROM (to_jsonb(OLD) - 'seats_taken'))
  EXECUTE FUNCTION catalog_changed_by_company();
CREATE TRIGGER payment_configurations_catalog AFTER INSERT OR UPDATE OR DELETE ON payment_configurations
  FOR EACH ROW EXECUTE FUNCTION catalog_changed_by_offer();
-- A new address is no company's until the company's row names it.
CREATE TRIGGER addresses_catalog AFTER UPDATE OR DELETE ON addresses
  FOR EACH ROW EXECUTE FUNCTION catalog_changed_by_address();
-- Reference rows change only when the embedded data does: every company.
CREATE TRIGGER kinds_catalog AFTER UPDATE OR DELETE ON kinds FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_for_all();
CREATE TRIGGER shifts_catalog AFTER UPDATE OR DELETE ON shifts FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_for_all();
CREATE TRIGGER cities_catalog AFTER UPDATE OR DELETE ON cities FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_for_all();
CREATE TRIGGER states_catalog AFTER UPDATE OR DELETE ON states FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_for_all();

-- +goose Down
DROP TRIGGER states_catalog ON states;
DROP TRIGGER cities_catalog ON cities;
DROP TRIGGER shifts_catalog ON shifts;
DROP TRIGGER kinds_catalog ON kinds;
DROP TRIGGER addresses_catalog ON addresses;
DROP TRIGGER payment_configurations_catalog ON payment_configurations;
DROP TRIGGER offers_catalog_update ON offers;
DROP TRIGGER offers_catalog ON offers;
DROP TRIGGER products_catalog ON products;
DROP TRIGGER companies_catalog_update ON companies;
DROP FUNCTION catalog_changed_for_all();
DROP FUNCTION catalog_changed_by_address();
DROP FUNCTION catalog_changed_by_offer();
DROP FUNCTION catalog_changed_by_company();
DROP FUNCTION companies_catalog_version();
ALTER TABLE companies DROP COLUMN catalog_version;
