-- +goose Up
-- One schema for SQLite and PostgreSQL: both accept these types (SQLite
-- gives BOOLEAN and BIGINT numeric affinity). Timestamps are BIGINT
-- milliseconds since the Unix epoch so that the same SQL orders and filters
-- them identically on both; rates are TEXT decimals so they stay exact.
CREATE TABLE states (
  id TEXT PRIMARY KEY,
  ibge_code INTEGER NOT NULL UNIQUE,
  name TEXT NOT NULL,
  acronym TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE cities (
  id TEXT PRIMARY KEY,
  ibge_code TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  state_id TEXT NOT NULL REFERENCES states (id),
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE addresses (
  id TEXT PRIMARY KEY,
  zipcode TEXT NOT NULL,
  street TEXT NOT NULL,
  number TEXT NOT NULL,
  complement TEXT,
  neighborhood TEXT NOT NULL,
  city_id TEXT NOT NULL REFERENCES cities (id),
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE companies (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  document TEXT NOT NULL,
  slug TEXT NOT NULL UNIQUE,
  email TEXT,
  phone TEXT,
  logo TEXT NOT NULL DEFAULT '',
  dark BOOLEAN NOT NULL DEFAULT FALSE,
  palette TEXT NOT NULL DEFAULT 'default',
  address_id TEXT REFERENCES addresses (id),
  max_interest_rate TEXT NOT NULL,
  max_installments INTEGER NOT NULL,
  min_down_payment_rate TEXT NOT NULL,
  min_down_payment_cents BIGINT NOT NULL,
  registration_fee TEXT NOT NULL,
  take_rate_type TEXT NOT NULL,
  take_rate_value TEXT NOT NULL,
  fine_rate TEXT NOT NULL,
  monthly_interest_rate TEXT NOT NULL,
  min_installment_cents BIGINT NOT NULL,
  payment_expiry_hours INTEGER NOT NULL,
  installment_issue_days INTEGER NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  prefix TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT,
  last_used_at BIGINT
);
CREATE INDEX tokens_company ON tokens (company_id, created_at);

CREATE TABLE kinds (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE shifts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE products (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT,
  kind_id TEXT NOT NULL REFERENCES kinds (id),
  shift_id TEXT NOT NULL REFERENCES shifts (id),
  access_period TEXT NOT NULL,
  duration_in_days INTEGER,
  duration_in_hours INTEGER,
  start_date TEXT,
  end_date TEXT,
  full_amount_cents BIGINT NOT NULL,
  banner_url TEXT,
  google_pixel_code TEXT NOT NULL DEFAULT '',
  meta_pixel_code TEXT NOT NULL DEFAULT '',
  metadata TEXT NOT NULL DEFAULT '{}',
  availability TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX products_owner ON products (company_id, environment, created_at, id);

CREATE TABLE offers (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  product_id TEXT NOT NULL REFERENCES products (id),
  name TEXT NOT NULL,
  amount_cents BIGINT NOT NULL,
  availability TEXT NOT NULL,
  expires_at BIGINT,
  seats INTEGER,
  seats_taken INTEGER NOT NULL DEFAULT 0,
  exclude_from_campaign BOOLEAN NOT NULL DEFAULT FALSE,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX offers_owner ON offers (company_id, environment, created_at, id);
CREATE INDEX offers_product ON offers (product_id);

CREATE TABLE payment_configurations (
  id TEXT PRIMARY KEY,
  offer_id TEXT NOT NULL REFERENCES offers (id),
  position INTEGER NOT NULL,
  payment_type TEXT NOT NULL,
  financed_type TEXT,
  payment_methods TEXT NOT NULL,
  allowed_down_payment_methods TEXT NOT NULL,
  availability TEXT NOT NULL,
  expires_in INTEGER NOT NULL,
  interest_rate TEXT NOT NULL,
  max_installments INTEGER NOT NULL,
  max_down_payment_installments INTEGER,
  min_installment_cents BIGINT NOT NULL,
  down_payment_type TEXT,
  down_payment_value TEXT NOT NULL,
  registration_fee TEXT NOT NULL,
  take_rate_type TEXT NOT NULL,
  take_rate_value TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX payment_configurations_offer ON payment_configurations (offer_id, position);

CREATE TABLE orders (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  offer_id TEXT NOT NULL REFERENCES offers (id),
  status TEXT NOT NULL,
  customer_name TEXT NOT NULL,
  customer_birthdate TEXT NOT NULL,
  customer_document TEXT NOT NULL,
  email TEXT NOT NULL,
  phone TEXT NOT NULL,
  address_id TEXT NOT NULL REFERENCES addresses (id),
  cancelation_reason TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX orders_owner ON orders (company_id, environment, created_at, id);

CREATE TABLE billings (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  order_id TEXT NOT NULL REFERENCES orders (id),
  payment_configuration_id TEXT NOT NULL REFERENCES payment_configurations (id),
  origin_billing_id TEXT REFERENCES billings (id),
  amount_cents BIGINT NOT NULL,
  due_day INTEGER NOT NULL,
  installments INTEGER NOT NULL,
  status TEXT NOT NULL,
  cancelation_reason TEXT,
  finished_at BIGINT,
  signature_remote_ip TEXT NOT NULL,
  signature_user_agent TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
-- One original billing per order: the database itself refuses a second
-- charge even if two requests race past the application's checks.
CREATE UNIQUE INDEX billings_one_per_order ON billings (order_id) WHERE origin_billing_id IS NULL;

CREATE TABLE bills (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  billing_id TEXT NOT NULL REFERENCES billings (id),
  order_id TEXT NOT NULL REFERENCES orders (id),
  number INTEGER NOT NULL,
  bill_type TEXT NOT NULL,
  status TEXT NOT NULL,
  amount_cents BIGINT NOT NULL,
  due_date BIGINT NOT NULL,
  effective_due_date BIGINT NOT NULL,
  disable_penalties_until BIGINT,
  paid_at BIGINT,
  authentication_code TEXT NOT NULL,
  down_payment_cents BIGINT NOT NULL,
  registration_fee_cents BIGINT NOT NULL,
  amortization_cents BIGINT NOT NULL,
  interest_cents BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX bills_due ON bills (company_id, environment, due_date, id);
CREATE INDEX bills_status_due ON bills (company_id, environment, status, due_date, id);
CREATE INDEX bills_billing ON bills (billing_id, number);
CREATE INDEX bills_order ON bills (order_id, due_date, id);
CREATE INDEX bills_paid ON bills (company_id, environment, paid_at, due_date, id) WHERE paid_at IS NOT NULL;
-- Sweeps look for open bills by effective due date across all companies.
CREATE INDEX bills_open_due ON bills (effective_due_date) WHERE status = 'pending';

CREATE TABLE payments (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  bill_id TEXT NOT NULL REFERENCES bills (id),
  payment_method TEXT NOT NULL,
  status TEXT NOT NULL,
  amount_cents BIGINT NOT NULL,
  paid_amount_cents BIGINT NOT NULL DEFAULT 0,
  refunded_amount_cents BIGINT NOT NULL DEFAULT 0,
  paid_at BIGINT,
  refunded_at BIGINT,
  expires_at BIGINT NOT NULL,
  installments INTEGER NOT NULL DEFAULT 1,
  nosso_numero TEXT UNIQUE,
  barcode TEXT,
  barcode_digits TEXT,
  pix_code TEXT,
  refused_reason TEXT,
  refused_reason_description TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX payments_bill ON payments (bill_id, created_at);
CREATE INDEX payments_open_expiry ON payments (expires_at) WHERE status = 'unpaid';

-- Counters hand out blocks of numbers (nosso número) without a hot row lock
-- inside the charge transaction.
CREATE TABLE counters (
  name TEXT PRIMARY KEY,
  value BIGINT NOT NULL
);
INSERT INTO counters (name, value) VALUES ('nosso_numero', 0);

CREATE TABLE events (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  entity TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  event TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX events_entity ON events (entity_id, created_at);
CREATE INDEX events_owner ON events (company_id, environment, created_at);

CREATE TABLE idempotency_keys (
  company_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL,
  response_status INTEGER,
  response_body TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (company_id, environment, idempotency_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL REFERENCES companies (id),
  environment TEXT NOT NULL,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  entity TEXT NOT NULL,
  events TEXT NOT NULL,
  verb TEXT NOT NULL,
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_until BIGINT,
  enabled BOOLEAN NOT NULL DEFAULT TRUE,
  disabled_reason TEXT,
  failing_since BIGINT,
  deleted_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX webhooks_owner ON webhooks (company_id, environment, entity);

CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  company_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  webhook_id TEXT NOT NULL REFERENCES webhooks (id),
  event_id TEXT NOT NULL REFERENCES events (id),
  status TEXT NOT NULL,
  attempt_count INTEGER NOT NULL DEFAULT 0,
  -- A manual retry bumps the generation so a retry already scheduled
  -- by the worker stands down instead of sending twice.
  generation INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id);
CREATE INDEX webhook_deliveries_owner ON webhook_deliveries (company_id, environment, created_at, id);
CREATE INDEX webhook_deliveries_open ON webhook_deliveries (status) WHERE status IN ('pending', 'retrying');

CREATE TABLE webhook_attempts (
  id TEXT PRIMARY KEY,
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
  attempted_at BIGINT NOT NULL,
  response_status INTEGER,
  duration_ms BIGINT NOT NULL,
  error TEXT,
  response_body TEXT
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempted_at);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
DROP TABLE idempotency_keys;
DROP TABLE events;
DROP TABLE counters;
DROP TABLE payments;
DROP TABLE bills;
DROP TABLE billings;
DROP TABLE orders;
DROP TABLE payment_configurations;
DROP TABLE offers;
DROP TABLE products;
DROP TABLE shifts;
DROP TABLE kinds;
DROP TABLE tokens;
DROP TABLE companies;
DROP TABLE addresses;
DROP TABLE cities;
DROP TABLE states;
